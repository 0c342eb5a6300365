// The one way code reaches a single Cosmos DB item (read, replace, patch, delete): the SDK puts the id in the
// request's URL, and an id of `.` or `..` collapses that URL to the container's own (a delete then drops the whole
// container), so every id is checked here whatever the caller. scripts/check-layering.ts keeps `.item(` here only.
import type { Container, Item, PartitionKey } from '@azure/cosmos';
import { AppError } from '../../errors.js';

/**
 * An id the guard refused: a programming error (the edges admit only closed id formats), reported with a stable
 * code and a message that names no id; the id itself is in `cause`, for the logs.
 */
export class UnsafeItemIdError extends AppError {
  constructor(what: 'item id' | 'partition key', value: unknown, reason: string) {
    super(
      'unsafe_item_id',
      'An internal check refused a Cosmos DB item id; nothing was sent to the database.',
      500,
      {
        cause: new Error(`Refused the ${what} ${describe(value)}: ${reason}.`),
      },
    );
  }
}

/** The SDK's handle on one item, once its id and partition key have passed the guard. */
export function guardedItem(container: Container, id: string, partitionKey: PartitionKey): Item {
  const idReason = unsafeReason(id);
  if (idReason !== undefined) throw new UnsafeItemIdError('item id', id, idReason);
  for (const part of Array.isArray(partitionKey) ? partitionKey : [partitionKey]) {
    const reason = typeof part === 'string' ? unsafePartitionKeyReason(part) : undefined;
    if (reason !== undefined) throw new UnsafeItemIdError('partition key', part, reason);
  }
  return container.item(id, partitionKey);
}

// `/`, `\`, `?` and `#` end or split a URL segment; `%` could spell a dot segment (`%2e%2e`) to anything that
// decodes the path before resolving it; control characters (\p{Cc}: C0, DEL, C1) have no place in a URL or a log.
const URL_BREAKING = /[/\\?#%\p{Cc}]/u;
const CONTROL = /\p{Cc}/u;

/** Why `id` must never reach an item's URL, or undefined when it is safe. */
export function unsafeReason(id: unknown): string | undefined {
  if (typeof id !== 'string') return 'not a string';
  if (id === '') return 'empty';
  if (id === '.' || id === '..') return 'a dot segment';
  if (URL_BREAKING.test(id)) return "holds '/', '\\', '?', '#', '%' or a control character";
  return undefined;
}

/** Partition key values travel in a header as JSON, not in the URL: only empty and control characters are out. */
function unsafePartitionKeyReason(value: string): string | undefined {
  if (value === '') return 'empty';
  if (CONTROL.test(value)) return 'holds a control character';
  return undefined;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 200)) : typeof value;
}
