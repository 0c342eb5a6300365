import { describe, expect, it } from 'vitest';

import { effectiveTtlSeconds, expiresAtMs } from './time-to-live.js';

describe('effectiveTtlSeconds', () => {
  it.each([
    // container defaultTtl, item ttl, effective
    [undefined, undefined, undefined],
    [undefined, 10, undefined], // TTL off for the container: the item's ttl is ignored
    [-1, undefined, undefined],
    [-1, 10, 10],
    [3600, undefined, 3600],
    [3600, 10, 10],
    [3600, -1, undefined],
    [3600, 0, 3600], // not a valid ttl: the container's applies
    [3600, 'soon', 3600],
    [0, 10, undefined], // defaultTtl 0 is invalid in Azure: treated as off
  ])('defaultTtl %s, item ttl %s -> %s', (defaultTtl, itemTtl, expected) => {
    expect(effectiveTtlSeconds(defaultTtl, itemTtl)).toBe(expected);
  });
});

describe('expiresAtMs', () => {
  it('counts from the last write (_ts, in seconds)', () => {
    expect(expiresAtMs(60, { _ts: 1000 })).toBe(1_060_000);
    expect(expiresAtMs(60, { _ts: 1000, ttl: 5 })).toBe(1_005_000);
    expect(expiresAtMs(60, {})).toBeUndefined();
    expect(expiresAtMs(undefined, { _ts: 1000, ttl: 5 })).toBeUndefined();
  });
});
