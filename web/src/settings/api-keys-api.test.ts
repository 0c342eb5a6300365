import { describe, expect, it } from 'vitest';
import { expiryIn, keyState } from './api-keys-api';

describe('api key helpers', () => {
  const now = Date.parse('2026-12-01T00:00:00Z');

  it('turns a choice of days into an expiry from now, and "never" into none', () => {
    expect(expiryIn(30, now)).toBe('2026-12-31T00:00:00.000Z');
    expect(expiryIn(undefined, now)).toBeUndefined();
  });

  it('marks a key expired once its expiry has passed', () => {
    expect(keyState({ expiresAt: null }, now)).toBe('active');
    expect(keyState({ expiresAt: '2026-12-02T00:00:00Z' }, now)).toBe('active');
    expect(keyState({ expiresAt: '2026-12-01T00:00:00Z' }, now)).toBe('expired');
  });
});
