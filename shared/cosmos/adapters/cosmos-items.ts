// What every Cosmos DB adapter needs around the SDK: the HTTP status of a failure, a point read that treats 404
// as "absent" and checks the stored document against its contract, and one DependencyError for a failed call.
// The SDK's own message stays in `cause` (for the logs): clients only see which operation failed.
import type { Container } from '@azure/cosmos';
import type { z } from 'zod';
import { DependencyError } from '../../errors.js';

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

/**
 * A point read; undefined when there is no such item. The document must match `schema` (its contract): one that
 * does not is reported as a failure, never handed on half-understood. `what` names it in the error.
 */
export async function readItem<T>(
  container: Container,
  id: string,
  partitionKey: string,
  what: string,
  schema: z.ZodType<T>,
): Promise<StoredItem<T> | undefined> {
  let resource: unknown;
  let etag: string;
  try {
    const response = await container.item(id, partitionKey).read();
    if (response.statusCode === 404 || response.resource === undefined) return undefined;
    resource = response.resource;
    etag = response.etag;
  } catch (error) {
    if (cosmosStatus(error) === 404) return undefined;
    throw cosmosFailure(`reading ${what}`, error);
  }
  const parsed = schema.safeParse(resource);
  if (!parsed.success)
    throw new DependencyError('cosmos', `Cosmos DB holds ${what} in a shape this version does not read.`, {
      cause: parsed.error,
    });
  return { resource: parsed.data, etag };
}
