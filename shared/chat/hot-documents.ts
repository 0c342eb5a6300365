// The chat area's documents as hot store entries: a document's `id` is the entry's key and its `sessionId` the
// session the entry belongs to, so a value holds neither; reading one back checks it against its contract.
import type { z } from 'zod';
import type { HotEntry, HotValue } from '../conversation/hot-store.js';
import { DependencyError } from '../errors.js';

/** The value an entry keeps of a document: all of it but its key and its session. */
export function toHotValue(document: { id: string; sessionId: string }): HotValue {
  const { id: _id, sessionId: _sessionId, ...value } = document;
  return value;
}

/** The document an entry holds, checked against its contract; one this version cannot read is a dependency failure. */
export function fromHotEntry<T>(schema: z.ZodType<T>, sessionId: string, entry: HotEntry, what: string): T {
  const parsed = schema.safeParse({ ...entry.value, id: entry.key, sessionId });
  if (!parsed.success)
    throw new DependencyError('hot-store', `The hot store holds ${what} this version does not read.`, {
      cause: parsed.error,
    });
  return parsed.data;
}
