// Conditional writes: patches of the changed fields only, optionally conditioned on the stored document (Cosmos DB's
// conditional patch, `filterPredicate`), and whole documents written on the version they were read at (If-Match);
// both answer without the document (`Prefer: return=minimal`) where the SDK allows it.
import type { Container, ItemDefinition, PartitionKey, PatchOperation } from '@azure/cosmos';
import { cosmosFailure, cosmosStatus } from './cosmos-items.js';
import { guardedItem } from './guarded-item.js';

/**
 * The REST API's `Prefer: return=minimal`: a write answers with headers only (this SDK's own option covers batch
 * and bulk only). Not on a create or an upsert, whose answer the SDK reads the item's id from.
 */
export const RETURN_MINIMAL = { initialHeaders: { Prefer: 'return=minimal' } } as const;

/**
 * Patches the item; 'unmet' when `condition` (`FROM c WHERE ...`, no parameters: Cosmos DB takes none there) does
 * not hold for the stored item (412), 'missing' when there is no such item (404). `what` names it in errors.
 */
export async function patchItem(
  container: Container,
  id: string,
  partitionKey: PartitionKey,
  operations: PatchOperation[],
  condition: string | undefined,
  what: string,
): Promise<'patched' | 'unmet' | 'missing'> {
  const item = guardedItem(container, id, partitionKey);
  try {
    await item.patch(condition === undefined ? operations : { operations, condition }, RETURN_MINIMAL);
    return 'patched';
  } catch (error) {
    const status = cosmosStatus(error);
    if (status === 412) return 'unmet';
    if (status === 404) return 'missing';
    throw cosmosFailure(`updating ${what}`, error);
  }
}

/** A whole number to write into a condition (which takes no parameters): anything else is a bug of the caller. */
export function conditionNumber(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`A condition needs a whole number, not ${value}.`);
  return String(value);
}

/**
 * Writes a whole document if it is still at `version` (its etag when read), or, without a version, creates it if
 * there is none yet. 'conflict' when another writer got there first: it was created (409), changed (412) or deleted
 * (404) since. Otherwise the new version (etag).
 */
export async function writeOnVersion(
  container: Container,
  document: ItemDefinition & { id: string },
  partitionKey: PartitionKey,
  version: string | undefined,
  what: string,
): Promise<{ etag: string } | 'conflict'> {
  // The guard refuses a bad id before the try: a refusal is a bug to report as such, not a database failure.
  const stored =
    version === undefined ? undefined : { item: guardedItem(container, document.id, partitionKey), version };
  try {
    const { etag } =
      stored === undefined
        ? await container.items.create(document)
        : await stored.item.replace(document, {
            ...RETURN_MINIMAL,
            accessCondition: { type: 'IfMatch', condition: stored.version },
          });
    return { etag };
  } catch (error) {
    const status = cosmosStatus(error);
    if (status === 409 || status === 412 || status === 404) return 'conflict';
    throw cosmosFailure(`writing ${what}`, error);
  }
}
