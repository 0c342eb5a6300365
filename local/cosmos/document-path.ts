// Reading a value out of a stored document by its path, the way the emulator's partition keys, partition index
// and search functions all do.

/** The value at a path of property names (["user", "id"] for /user/id); undefined where a step is missing. */
export function valueAt(document: unknown, path: readonly string[]): unknown {
  let value = document;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}
