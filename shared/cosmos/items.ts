// What every Cosmos DB adapter needs around the SDK: the HTTP status of a failure, a point read that treats
// 404 as "absent", and one DependencyError for a failed call. The SDK's own message stays in `cause` (for the
// logs): clients only see which operation failed.
import type { Container, ItemDefinition } from '@azure/cosmos';
import { DependencyError } from '../errors.js';

/** The HTTP status the SDK put on a failure (`code`), if any. */
export function cosmosStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'number' ? error.code : undefined;
}

/** `action` completes "Cosmos DB failed ...", e.g. 'reading the session'. */
export function cosmosFailure(action: string, error: unknown): DependencyError {
  return new DependencyError('cosmos', `Cosmos DB failed ${action}.`, { cause: error });
}

export interface StoredItem<T> {
  resource: T;
  etag: string;
}

/** A point read; undefined when there is no such item. `what` names it in the error. */
export async function readItem<T extends ItemDefinition>(
  container: Container,
  id: string,
  partitionKey: string,
  what: string,
): Promise<StoredItem<T> | undefined> {
  try {
    const response = await container.item(id, partitionKey).read<T>();
    if (response.statusCode === 404 || response.resource === undefined) return undefined;
    return { resource: response.resource, etag: response.etag };
  } catch (error) {
    if (cosmosStatus(error) === 404) return undefined;
    throw cosmosFailure(`reading ${what}`, error);
  }
}
