// The rebinding guard's decisions: which Host names and Origins are this machine's, what a setting or
// CORS_ALLOWED_ORIGINS adds, and principal headers accepted from loopback callers only.
import { describe, expect, it } from 'vitest';
import {
  frontDoorRefusal,
  isLoopbackAddress,
  isLoopbackHostname,
  type FrontDoorRequest,
} from './rebinding-guard.js';

const policy = {
  allowedHosts: ['devbox.internal'],
  corsAllows: (origin: string) => origin === 'https://chat.example.com',
};
const request = (overrides: Partial<FrontDoorRequest>): FrontDoorRequest => ({
  host: 'localhost:7071',
  origin: undefined,
  remoteAddress: '127.0.0.1',
  hasPrincipalHeaders: true,
  ...overrides,
});
const code = (overrides: Partial<FrontDoorRequest>) => frontDoorRefusal(request(overrides), policy)?.code;

describe('isLoopbackHostname', () => {
  it.each(['localhost', 'LOCALHOST', 'localhost.', 'app.localhost', '127.0.0.1', '127.1.2.3', '[::1]'])(
    'takes %s as this machine',
    (name) => expect(isLoopbackHostname(name)).toBe(true),
  );
  it.each([
    'evil.example',
    'localhost.evil.example',
    '0.0.0.0',
    '10.0.0.5',
    '[::]',
    'evil-localhost',
    '128.0.0.1',
  ])('does not take %s', (name) => expect(isLoopbackHostname(name)).toBe(false));
});

describe('isLoopbackAddress', () => {
  it('knows loopback socket addresses, IPv4-mapped ones included', () => {
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(address)).toBe(true);
    for (const address of ['192.168.1.20', '::ffff:10.0.0.1', 'fe80::1', undefined])
      expect(isLoopbackAddress(address)).toBe(false);
  });
});

describe('frontDoorRefusal', () => {
  it('serves loopback hosts with any port, and a host the setting allows', () => {
    for (const host of [
      'localhost:7071',
      '127.0.0.1:7071',
      '[::1]:7071',
      'localhost',
      'devbox.internal:7071',
    ])
      expect(code({ host })).toBeUndefined();
  });

  it('refuses any other Host, a missing one and one that is not a host', () => {
    for (const host of [
      'evil.example',
      'evil.example:7071',
      '0.0.0.0:7071',
      undefined,
      'user@localhost',
      'localhost/x',
    ])
      expect(code({ host })).toBe('host_not_allowed');
    expect(frontDoorRefusal(request({ host: 'evil.example' }), policy)?.detail).toMatch(
      /LOCAL_ALLOWED_HOSTS/,
    );
  });

  it('serves no Origin, loopback origins, allowed hosts and CORS_ALLOWED_ORIGINS, and refuses every other', () => {
    for (const origin of [
      undefined,
      'http://localhost:5173',
      'http://127.0.0.1:7071',
      'https://app.localhost',
      'http://devbox.internal:3000',
      'https://chat.example.com',
    ])
      expect(code({ origin })).toBeUndefined();
    for (const origin of [
      'http://evil.example',
      'null',
      'file://',
      'http://localhost.evil.example',
      'garbage',
    ])
      expect(code({ origin })).toBe('origin_not_allowed');
  });

  it('accepts principal headers only from a loopback caller', () => {
    expect(code({ remoteAddress: '::ffff:127.0.0.1' })).toBeUndefined();
    expect(code({ remoteAddress: '192.168.1.20' })).toBe('identity_not_allowed');
    expect(code({ remoteAddress: '192.168.1.20', hasPrincipalHeaders: false })).toBeUndefined();
  });
});
