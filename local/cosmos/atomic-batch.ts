// Transactional batches on the local Cosmos DB server as Cosmos DB runs them: Patch among the operations, and all or
// nothing. Every operation first runs on a staged copy of the partition; only when all succeed do they run on the
// stored documents, in the same synchronous step, so no other request sees a batch half applied.
import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  batchDocuments,
  runBatchOperation,
  stagedDocuments,
  type BatchOperation,
  type OperationResult,
} from './cosmosdb-server-batch.js';
import type { CosmosAccount } from './cosmosdb-server-internals.js';
import type { RouteParams, Router } from './cosmosdb-server-router.js';
import { wholeQueryCondition } from './patch-conditions.js';
import { headerIsTrue, partitionKeyHeader } from './request-listener.js';

/** Cosmos DB's limit on the operations of one transactional batch. */
const MAX_OPERATIONS = 100;

/** The router, with atomic batch requests answered here (a non-atomic bulk request is left to the package). */
export function withAtomicBatch(router: Router): Router {
  return (req) => {
    const route = router(req);
    if (
      route === undefined ||
      req.method !== 'POST' ||
      !headerIsTrue(req, 'x-ms-cosmos-is-batch-request') ||
      !headerIsTrue(req, 'x-ms-cosmos-batch-atomic')
    )
      return route;
    const [params] = route;
    return [params, (account, request, res, routeParams) => answerBatch(account, request, res, routeParams)];
  };
}

interface BatchResult {
  statusCode: number;
  requestCharge: number;
  eTag?: string;
  resourceBody?: Record<string, unknown>;
}

async function answerBatch(
  account: CosmosAccount,
  req: IncomingMessage,
  res: ServerResponse,
  { dbId, collId }: RouteParams,
): Promise<unknown> {
  const body = await readJson(req);
  const documents =
    dbId === undefined || collId === undefined ? undefined : batchDocuments(account, dbId, collId);
  if (documents === undefined) {
    res.statusCode = 404;
    return { code: 'NotFound', message: 'The container does not exist.' };
  }
  const header = partitionKeyHeader(req);
  const problem = invalidBatch(body, header);
  if (problem !== undefined) {
    res.statusCode = 400;
    return { code: 'BadRequest', message: problem };
  }
  // Operations without a key of their own are in the batch's partition.
  const operations = (body as BatchOperation[]).map((operation): BatchOperation => ({
    ...operation,
    partitionKey: operation.partitionKey ?? header,
    resourceBody: withWholeQueryCondition(operation),
  }));

  const staged = stagedDocuments(documents);
  for (const [index, operation] of operations.entries()) {
    const result = runBatchOperation(staged, operation);
    if (result.statusCode >= 400) {
      // As Cosmos DB answers a failed transactional batch: 207, the failing operation's status, 424 for the rest.
      res.statusCode = 207;
      return operations.map((_, i): BatchResult =>
        i === index
          ? {
              statusCode: result.statusCode,
              requestCharge: 0,
              ...(result.body ? { resourceBody: result.body } : {}),
            }
          : { statusCode: 424, requestCharge: 0 },
      );
    }
  }
  // `Prefer: return=minimal` (the SDK's contentResponseOnWriteEnabled: false): statuses and etags, no documents.
  const minimal = req.headers.prefer === 'return=minimal';
  const results: BatchResult[] = [];
  for (const operation of operations) {
    const result = runBatchOperation(documents, operation);
    // The staged run succeeded on the same state, in the same step: a failure here is a defect of this server.
    if (result.statusCode >= 400)
      throw new Error(`A batch operation failed after its staged run succeeded (${result.statusCode}).`);
    results.push(succeeded(result, minimal));
  }
  res.statusCode = 200;
  return results;
}

function succeeded(result: OperationResult, minimal: boolean): BatchResult {
  const etag = result.body?._etag;
  return {
    statusCode: result.statusCode,
    requestCharge: 1,
    ...(typeof etag === 'string' ? { eTag: etag } : {}),
    ...(result.body && !minimal ? { resourceBody: result.body } : {}),
  };
}

/** Why the batch cannot run at all (a 400 for the whole batch), or undefined. */
function invalidBatch(body: unknown, header: string | undefined): string | undefined {
  if (!Array.isArray(body)) return 'A batch is an array of operations.';
  if (body.length === 0) return 'A batch needs at least one operation.';
  if (body.length > MAX_OPERATIONS) return `A batch holds at most ${MAX_OPERATIONS} operations.`;
  if (header === undefined) return 'A batch needs the partition key of its operations.';
  for (const operation of body as unknown[]) {
    if (typeof operation !== 'object' || operation === null) return 'Each operation of a batch is an object.';
    const key = (operation as BatchOperation).partitionKey;
    if (key !== undefined && !samePartitionKey(key, header))
      return 'Every operation of a batch must be in the partition the batch names.';
  }
  return undefined;
}

function samePartitionKey(key: unknown, header: string): boolean {
  try {
    return typeof key === 'string' && JSON.stringify(JSON.parse(key)) === JSON.stringify(JSON.parse(header));
  } catch {
    return false;
  }
}

/** A Patch operation's condition, written so the package evaluates it as Cosmos DB does (patch-conditions.ts). */
function withWholeQueryCondition(operation: BatchOperation): unknown {
  const body = operation.resourceBody;
  if (operation.operationType !== 'Patch' || typeof body !== 'object' || body === null || Array.isArray(body))
    return body;
  const { condition } = body as { condition?: unknown };
  return typeof condition === 'string' ? { ...body, condition: wholeQueryCondition(condition) } : body;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}
