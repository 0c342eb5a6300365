// The per-minute search counter in memory, for tests: the same outcomes as the Cosmos DB adapter.
import type { SearchCounter } from '../../shared/quota/search-rate.js';

export class MemorySearchCounter implements SearchCounter {
  readonly #windows = new Map<string, number>();

  countSearch(userId: string, window: { start: Date }, max: number) {
    const key = `${userId}@${window.start.toISOString()}`;
    const count = this.#windows.get(key) ?? 0;
    if (count >= max) return Promise.resolve({ counted: false as const, count });
    this.#windows.set(key, count + 1);
    return Promise.resolve({ counted: true as const });
  }
}
