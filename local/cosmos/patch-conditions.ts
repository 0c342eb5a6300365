// Conditional patches (the SDK's `filterPredicate`) on the local Cosmos DB server. The package lower-cases a
// condition written `FROM c WHERE ...` before it runs it, so a predicate on a camel-case property
// (messageCount) never holds; a condition written as a whole query is run as written.
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';

import type { Router } from './cosmosdb-server-router.js';

const FROM_C_WHERE = /^\s*from\s+c\s+where\s+/i;

/** The router, with the condition of each document patch made one the package evaluates as Cosmos DB does. */
export function withPatchConditions(router: Router): Router {
  return (req) => {
    const route = router(req);
    if (route === undefined || req.method !== 'PATCH') return route;
    const [params, handler] = route;
    return [
      params,
      async (account, request, res, routeParams) =>
        handler(account, await rewritten(request), res, routeParams),
    ];
  };
}

/** A condition `FROM c WHERE ...` as the whole query on the patched document, which the package runs as written. */
export function wholeQueryCondition(condition: string): string {
  if (!FROM_C_WHERE.test(condition)) return condition;
  return `SELECT * FROM c WHERE c.id = @id AND (${condition.replace(FROM_C_WHERE, '')})`;
}

/** The request with its body's condition rewritten, as a stream the package's body reader reads like the original. */
async function rewritten(req: IncomingMessage): Promise<IncomingMessage> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let body = Buffer.concat(chunks);
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (isRecord(parsed) && typeof parsed.condition === 'string' && FROM_C_WHERE.test(parsed.condition))
      body = Buffer.from(JSON.stringify({ ...parsed, condition: wholeQueryCondition(parsed.condition) }));
  } catch {
    // Not JSON: the package answers it as it would have.
  }
  return Object.assign(Readable.from([body]), {
    headers: req.headers,
    method: req.method,
    url: req.url,
  }) as unknown as IncomingMessage;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
