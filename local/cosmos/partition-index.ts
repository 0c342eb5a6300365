// One container's documents by partition key value, kept up to date on every write and delete, so a query sent with
// a partition key looks at that partition only. A hierarchical key ([/userId, /sessionId]) is indexed under each
// prefix as well, as a query may name the user only.
import type { StoredResource } from './cosmosdb-server-internals.js';
import { valueAt } from './document-path.js';

/** How a missing key component is told apart from JSON null (the SDK sends `{}` for "none"). */
const NONE = '\u0000none';

export class PartitionIndex {
  readonly #paths: readonly (readonly string[])[];
  /** `<depth>:<encoded values>` → the partition's documents by `_rid`, in storage order. */
  readonly #buckets = new Map<string, Map<string, StoredResource>>();
  readonly #keysOf = new Map<string, string[]>();

  /** `paths` are the container's partition key paths (`/userId`, `/a/b`). */
  constructor(paths: readonly string[]) {
    this.#paths = paths.map((path) => path.split('/').filter((segment) => segment !== ''));
  }

  /** Whether lookups can be answered (the package files some containers by `id` instead). */
  get usable(): boolean {
    return (
      this.#paths.length > 0 && this.#paths.every((path) => path.length > 0 && path[0] !== '_partitionKey')
    );
  }

  /** Stores or replaces a document (same `_rid`), moving it to the end as the package's storage order does. */
  set(document: StoredResource): void {
    if (!this.usable) return;
    this.delete(document._rid);
    const values = this.#paths.map((path) => encode(valueAt(document, path)));
    const keys = values.map((_, depth) => keyOf(values.slice(0, depth + 1)));
    for (const key of keys) {
      let bucket = this.#buckets.get(key);
      if (!bucket) this.#buckets.set(key, (bucket = new Map<string, StoredResource>()));
      bucket.set(document._rid, document);
    }
    this.#keysOf.set(document._rid, keys);
  }

  delete(rid: string): void {
    const keys = this.#keysOf.get(rid);
    if (!keys) return;
    this.#keysOf.delete(rid);
    for (const key of keys) {
      const bucket = this.#buckets.get(key);
      bucket?.delete(rid);
      if (bucket?.size === 0) this.#buckets.delete(key);
    }
  }

  /**
   * The documents of the partition an `x-ms-documentdb-partitionkey` header names (the full key or a prefix of
   * a hierarchical one), or undefined when the header is not one this index can answer (the caller scans all).
   */
  lookup(header: string): StoredResource[] | undefined {
    if (!this.usable) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(header);
    } catch {
      return undefined;
    }
    const values = Array.isArray(parsed) ? parsed : [parsed];
    if (values.length === 0 || values.length > this.#paths.length) return undefined;
    const encoded: string[] = [];
    for (const value of values) {
      if (isNone(value)) encoded.push(NONE);
      else if (value === null || typeof value !== 'object') encoded.push(encode(value));
      else return undefined;
    }
    return [...(this.#buckets.get(keyOf(encoded))?.values() ?? [])];
  }
}

function encode(value: unknown): string {
  return value === undefined ? NONE : JSON.stringify(value);
}

function keyOf(encodedValues: readonly string[]): string {
  return `${encodedValues.length}:${JSON.stringify(encodedValues)}`;
}

function isNone(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0
  );
}
