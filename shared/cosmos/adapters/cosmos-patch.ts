// Patches: the changed fields only, optionally conditioned on the stored document (Cosmos DB's conditional patch,
// `filterPredicate`), answering without the document (`Prefer: return=minimal`).
import type { Container, PartitionKey, PatchOperation } from '@azure/cosmos';
import { cosmosFailure, cosmosStatus } from './cosmos-items.js';

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
  try {
    await container
      .item(id, partitionKey)
      .patch(condition === undefined ? operations : { operations, condition }, RETURN_MINIMAL);
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
