import { describe, expect, it } from 'vitest';
import { addressKind, refusalOf } from './outbound-address.js';

describe('outbound addresses', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['169.254.169.254', 'special'],
    ['::ffff:169.254.169.254', 'special'],
    ['::ffff:a9fe:a9fe', 'special'],
    ['64:ff9b::a9fe:a9fe', 'special'],
    ['10.1.2.3', 'special'],
    ['172.31.255.255', 'special'],
    ['192.168.0.1', 'special'],
    ['100.64.0.1', 'special'],
    ['0.0.0.0', 'special'],
    ['::', 'special'],
    ['fd00:ec2::254', 'special'],
    ['fe80::1', 'special'],
    ['not-an-address', 'special'],
  ])('%s is %s', (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });

  it('refuses a host when any of its addresses is refused, unless the host is listed', () => {
    const azure = { allowLoopback: false, allowedHosts: ['mcp.internal.example'] };
    expect(refusalOf('api.example.com', ['8.8.8.8'], azure)).toBeUndefined();
    expect(refusalOf('api.example.com', ['8.8.8.8', '169.254.169.254'], azure)).toMatch(/169\.254\.169\.254/);
    expect(refusalOf('localhost', ['127.0.0.1'], azure)).toMatch(/loopback/);
    expect(refusalOf('MCP.internal.example', ['10.0.0.4'], azure)).toBeUndefined();
    expect(refusalOf('nowhere.example', [], azure)).toMatch(/no address/);
  });

  it('lets the local runtime reach loopback, and nothing else private', () => {
    const local = { allowLoopback: true, allowedHosts: [] };
    expect(refusalOf('localhost', ['127.0.0.1', '::1'], local)).toBeUndefined();
    expect(refusalOf('metadata.local', ['169.254.169.254'], local)).toMatch(/link-local/);
  });
});
