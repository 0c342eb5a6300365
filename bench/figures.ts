// Small, pure arithmetic the chat benchmark reports with: percentiles, rounding, ratios and CPU deltas.

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
}

/** Nearest-rank percentile of the finite values (a turn that never streamed has none); NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export function percentiles(values: readonly number[]): Percentiles {
  return {
    p50: round(percentile(values, 50)),
    p90: round(percentile(values, 90)),
    p99: round(percentile(values, 99)),
  };
}

export function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** a ÷ b, or null when b is too close to zero for the ratio to mean anything. */
export function ratio(a: number, b: number, smallest = 0.5): number | null {
  if (!Number.isFinite(a) || !Number.isFinite(b) || Math.abs(b) < smallest) return null;
  return round(a / b, 2);
}

/** CPU milliseconds between two process.cpuUsage() readings (µs), per unit of work. */
export function cpuMsPer(
  before: { user: number; system: number },
  after: { user: number; system: number },
  units: number,
): number {
  return round((after.user - before.user + after.system - before.system) / 1000 / units, 2);
}

/** Event-loop utilisation between two raw readings (performance.eventLoopUtilization()). */
export function utilisation(
  before: { idle: number; active: number },
  after: { idle: number; active: number },
): number {
  const active = after.active - before.active;
  const total = active + after.idle - before.idle;
  return total > 0 ? round(active / total, 3) : 0;
}

export function sumOf<T>(items: readonly T[], value: (item: T) => number): number {
  return items.reduce((sum, item) => sum + value(item), 0);
}
