// The benchmark's arithmetic: percentiles, ratios, CPU and event-loop deltas.
import { describe, expect, it } from 'vitest';
import { cpuMsPer, percentile, percentiles, ratio, utilisation } from './figures.js';

describe('percentile', () => {
  it('takes the nearest rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
    expect(percentile([Number.NaN, 3, 1], 99)).toBe(3);
    expect(percentiles([1, 2, 3])).toEqual({ p50: 2, p90: 3, p99: 3 });
  });
});

describe('ratio', () => {
  it('divides, and gives null when the divisor is about zero', () => {
    expect(ratio(30, 10)).toBe(3);
    expect(ratio(30, 0.1)).toBeNull();
    expect(ratio(Number.NaN, 10)).toBeNull();
  });
});

describe('deltas', () => {
  it('turns cpuUsage µs into ms per unit', () => {
    expect(cpuMsPer({ user: 1000, system: 0 }, { user: 5000, system: 2000 }, 3)).toBe(2);
  });

  it('turns raw event-loop readings into a utilisation', () => {
    expect(utilisation({ idle: 10, active: 10 }, { idle: 40, active: 20 })).toBe(0.25);
    expect(utilisation({ idle: 1, active: 1 }, { idle: 1, active: 1 })).toBe(0);
  });
});
