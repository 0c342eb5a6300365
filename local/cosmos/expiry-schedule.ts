// When each document of one container expires: a min-heap keyed by expiry time with lazy invalidation, so a write
// costs O(log n) and finding what has expired costs O(expired · log n), never a scan of the container.
import type { StoredResource } from './cosmosdb-server-internals.js';

interface Entry {
  at: number;
  rid: string;
}

/** Rebuild the heap once stale entries outnumber live ones by this much (keeps memory bounded, amortised O(1)). */
const MIN_HEAP_TO_REBUILD = 1024;

export class ExpirySchedule {
  #heap: Entry[] = [];
  /** The current expiry of each document that expires; heap entries that disagree are stale. */
  readonly #current = new Map<string, { at: number; document: StoredResource }>();
  /** Heap entries looked at so far (diagnostics: stays proportional to expiries, not to the container). */
  examined = 0;

  /** The document was stored; `expiresAtMs` undefined = it never expires. */
  set(document: StoredResource, expiresAtMs: number | undefined): void {
    if (expiresAtMs === undefined) {
      this.#current.delete(document._rid);
      return;
    }
    this.#current.set(document._rid, { at: expiresAtMs, document });
    this.#push({ at: expiresAtMs, rid: document._rid });
    if (this.#heap.length > MIN_HEAP_TO_REBUILD && this.#heap.length > 2 * this.#current.size)
      this.#rebuild();
  }

  delete(rid: string): void {
    this.#current.delete(rid);
  }

  /** The earliest expiry time known (it may belong to a stale entry, which only makes a check come early). */
  get nextAt(): number | undefined {
    return this.#heap[0]?.at;
  }

  /** Takes out the documents expired at `now` (they are forgotten here; the caller removes them). */
  takeExpired(now: number): StoredResource[] {
    const expired: StoredResource[] = [];
    while (this.#heap.length > 0 && this.#heap[0]!.at <= now) {
      const entry = this.#pop();
      this.examined++;
      const current = this.#current.get(entry.rid);
      if (current?.at !== entry.at) continue; // stale: rewritten or deleted since
      this.#current.delete(entry.rid);
      expired.push(current.document);
    }
    return expired;
  }

  #rebuild(): void {
    this.#heap = [...this.#current].map(([rid, { at }]) => ({ at, rid }));
    for (let index = (this.#heap.length >> 1) - 1; index >= 0; index--) this.#down(index);
  }

  #push(entry: Entry): void {
    const heap = this.#heap;
    heap.push(entry);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]!.at <= entry.at) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = entry;
  }

  #pop(): Entry {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      this.#down(0);
    }
    return top;
  }

  #down(start: number): void {
    const heap = this.#heap;
    const entry = heap[start]!;
    let index = start;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.at < heap[left]!.at ? right : left;
      if (heap[child]!.at >= entry.at) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = entry;
  }
}
