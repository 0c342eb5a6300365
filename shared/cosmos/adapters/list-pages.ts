// One page of a listed query for an API (the conversations list, the memory summaries), with the continuation token
// the caller holds between pages: opaque base64url JSON of our version, a hash of what defines the list (so another
// list's token is refused rather than misread) and Cosmos DB's own continuation.
import { createHash } from 'node:crypto';
import type { Container, SqlQuerySpec } from '@azure/cosmos';
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { cosmosFailure, cosmosStatus } from './cosmos-items.js';

const INVALID_TOKEN =
  'Invalid continuationToken: pass back the continuationToken of the previous page of this same list, unchanged.';

const listTokenSchema = z.object({ v: z.literal(1), list: z.string(), cosmos: z.string().min(1) });

/** The key of a list: a short hash of what defines it (container, user, search, ...). */
export function listKey(parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

export interface ListPageRequest<T> {
  query: SqlQuerySpec;
  partitionKey: string;
  limit: number;
  continuationToken?: string;
  /** listKey(...) of the list the token must continue. */
  list: string;
  parse: (resources: unknown[]) => T[];
  /** Items to leave out after reading (a filter Cosmos DB could not apply); the page reads on to fill up. */
  keep?: (item: T) => boolean;
  /** For errors: "listing conversations". */
  what: string;
}

/**
 * Up to `limit` items from where the caller's token says. Cosmos DB may answer a page short (even empty) with more
 * to come, so it reads on until the page is full; a token Cosmos DB cannot read is the caller's error (400).
 */
export async function readListPage<T>(
  container: Container,
  request: ListPageRequest<T>,
): Promise<{ items: T[]; continuationToken?: string }> {
  const limit = Math.max(1, Math.floor(request.limit));
  let continuation =
    request.continuationToken === undefined
      ? undefined
      : decodeListToken(request.continuationToken, request.list);
  let fromCaller = continuation !== undefined;
  const items: T[] = [];
  do {
    let page;
    try {
      page = await container.items
        .query(request.query, {
          partitionKey: request.partitionKey,
          maxItemCount: limit - items.length,
          ...(continuation === undefined ? {} : { continuationToken: continuation }),
        })
        .fetchNext();
    } catch (error) {
      if (fromCaller && (cosmosStatus(error) === 400 || error instanceof SyntaxError)) throw invalidToken();
      throw cosmosFailure(request.what, error);
    }
    fromCaller = false;
    const parsed = request.parse(page.resources);
    items.push(...(request.keep ? parsed.filter(request.keep) : parsed));
    continuation = page.continuationToken || undefined;
  } while (items.length < limit && continuation !== undefined);
  return continuation === undefined
    ? { items }
    : { items, continuationToken: encodeListToken(request.list, continuation) };
}

function encodeListToken(list: string, cosmos: string): string {
  return Buffer.from(JSON.stringify({ v: 1, list, cosmos })).toString('base64url');
}

function decodeListToken(token: string, list: string): string {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const parsed = listTokenSchema.safeParse(decoded);
  if (!parsed.success || parsed.data.list !== list) throw invalidToken();
  return parsed.data.cosmos;
}

function invalidToken(): ValidationError {
  return new ValidationError(INVALID_TOKEN, [{ path: 'continuationToken', message: INVALID_TOKEN }]);
}
