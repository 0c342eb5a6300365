// The request units Azure Cosmos DB would charge for one request the local server answered (session consistency,
// default indexing): published figures where there are any, labelled assumptions elsewhere. See docs/turn-price.md.
// No I/O: the request listener describes each answered request and sends the result in `x-ms-request-charge`.

/** What the listener knows of a request once it is handled, enough to price it. */
export interface ChargedRequest {
  /** `<resource>.<verb>` as the listener names it: `item.read`, `item.create`, `item.query`, `container.read`... */
  operation: string;
  statusCode: number;
  /** The size of the item the request wrote or read, or of the query page it returned, in bytes. */
  bytes: number;
  /** Items a query or feed page returned. */
  itemCount?: number;
  /** The SDK's query-plan request beside a query. */
  queryPlan?: boolean;
  /** A transactional batch's operations, each priced as if sent alone. */
  batch?: readonly BatchOperation[];
}

export interface BatchOperation {
  /** The batch's `operationType`: Create, Upsert, Replace, Patch, Read, Delete. */
  operationType: string;
  statusCode: number;
  /** The item's size in bytes (what was written, or read back). */
  bytes: number;
}

/**
 * Point reads and inserts by item size, from the table "Document size" in
 * https://learn.microsoft.com/azure/cosmos-db/understand-request-unit-consumption (session or eventual consistency,
 * default indexing). Between two rows the charge is interpolated linearly (assumed: the page gives the rows only).
 * https://learn.microsoft.com/azure/cosmos-db/optimize-cost-reads-writes agrees at its two points (1 KB read 1 RU,
 * 100 KB read 10 RU) and puts a 1 KB insert at about 5.5 RU.
 */
const SIZE_TABLE: readonly (readonly [kb: number, read: number, write: number])[] = [
  [1, 1.0, 4.95],
  [2, 1.04, 6.29],
  [4, 1.14, 6.67],
  [8, 1.33, 7.04],
  [16, 1.67, 9.52],
  [32, 2.19, 11.23],
  [64, 4.76, 22.67],
  [128, 9.95, 48.19],
  [256, 20.28, 98.29],
  [512, 40.95, 184.57],
  [1024, 145.9, 625.0],
  [2048, 291.8, 1250.0],
];

/** "Replacing an item costs two times the charge required to insert the same item" (optimize-cost-reads-writes). */
const REPLACE_OVER_INSERT = 2;
/** Assumed (nothing published): a query page's fixed cost, beside what it loads and returns. */
export const QUERY_PAGE_BASE_RU = 2.3;
/** Assumed: each item a query page returns costs this beyond the read cost of the page's bytes. */
const QUERY_RU_PER_ITEM = 0.1;
/** Assumed: a metadata request (account, database, container, partition key ranges) costs one read. */
const METADATA_RU = 1;
/** Assumed: a request refused (4xx other than 429: not found, conflict, failed precondition) costs one read. */
const REFUSED_RU = 1;

/** The request units of one request, rounded to two decimals as Cosmos DB reports them. */
export function requestCharge(request: ChargedRequest): number {
  return round2(unrounded(request));
}

function unrounded(request: ChargedRequest): number {
  const { operation, statusCode } = request;
  // A throttled request or a server failure is not charged; the query plan is the gateway's work (assumed).
  if (statusCode === 429 || statusCode >= 500 || request.queryPlan) return 0;
  if (statusCode >= 400) return REFUSED_RU;
  const [resource, verb = ''] = operation.split('.');
  if (resource !== 'item') return METADATA_RU;
  switch (verb) {
    case 'read':
      // A conditional read answered 304 still looks the item up (assumed: one read of 1 KB).
      return statusCode === 304 ? 1 : readCharge(request.bytes);
    case 'query':
    case 'readAll':
      // A change feed poll with nothing new (304) costs one read (assumed).
      return statusCode === 304 ? 1 : queryPageCharge(request.bytes, request.itemCount ?? 0);
    case 'create':
      return writeCharge(request.bytes);
    case 'upsert':
      // 201: the upsert inserted the item; 200: it replaced one.
      return statusCode === 201 ? writeCharge(request.bytes) : replaceCharge(request.bytes);
    case 'replace':
    case 'patch':
      return replaceCharge(request.bytes);
    case 'delete':
      // Assumed: a delete costs the insert of the item it removes, whose size the listener no longer knows (1 KB).
      return writeCharge(request.bytes);
    case 'batch':
      return (request.batch ?? []).reduce((sum, operation) => sum + batchOperationCharge(operation), 0);
    default:
      return METADATA_RU;
  }
}

/** A batch is charged the sum of its operations (each as if sent alone); a failed one costs nothing (assumed). */
export function batchOperationCharge(operation: BatchOperation): number {
  if (operation.statusCode >= 400) return 0;
  switch (operation.operationType.toLowerCase()) {
    case 'read':
      return readCharge(operation.bytes);
    case 'create':
      return writeCharge(operation.bytes);
    case 'upsert':
      return operation.statusCode === 201 ? writeCharge(operation.bytes) : replaceCharge(operation.bytes);
    case 'replace':
    case 'patch':
      return replaceCharge(operation.bytes);
    default:
      return writeCharge(operation.bytes);
  }
}

/** A point read of an item of this many bytes. */
export function readCharge(bytes: number): number {
  return interpolate(bytes, 1);
}

/** Inserting an item of this many bytes. */
export function writeCharge(bytes: number): number {
  return interpolate(bytes, 2);
}

export function replaceCharge(bytes: number): number {
  return REPLACE_OVER_INSERT * writeCharge(bytes);
}

/** One page of a single-partition query: a fixed cost, then its items and the reading of its bytes. */
export function queryPageCharge(bytes: number, itemCount: number): number {
  const returned = itemCount > 0 ? readCharge(bytes) - 1 + QUERY_RU_PER_ITEM * itemCount : 0;
  return QUERY_PAGE_BASE_RU + returned;
}

function interpolate(bytes: number, column: 1 | 2): number {
  const kb = Math.max(1, bytes / 1024);
  let lower = SIZE_TABLE[0]!;
  for (const row of SIZE_TABLE) {
    if (row[0] === kb) return row[column];
    if (row[0] > kb) {
      const share = (kb - lower[0]) / (row[0] - lower[0]);
      return lower[column] + share * (row[column] - lower[column]);
    }
    lower = row;
  }
  // Past the table's last row (items are at most 2 MB), in proportion to it.
  return (lower[column] * kb) / lower[0];
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

// ---- from what the request listener has ----

/** An answered request as the listener has it, before pricing. */
export interface AnsweredRequest {
  operation: string;
  statusCode: number;
  /** The response body, before it is serialised. */
  payload: unknown;
  requestBytes: number;
  responseBytes: number;
  /** The client declined the item in the answer (`Prefer: return=minimal`), so responseBytes does not size it. */
  minimal: boolean;
  queryPlan: boolean;
  /** From chargeBatchResults, for a batch. */
  batch?: readonly BatchOperation[];
}

/** The charge of an answered request, its item sized from what was sent or answered. */
export function chargeAnswered(answered: AnsweredRequest): number {
  const { operation, payload, minimal } = answered;
  const verb = operation.slice(operation.indexOf('.') + 1);
  let bytes: number;
  if (verb === 'create' || verb === 'upsert' || verb === 'replace') bytes = answered.requestBytes;
  // A patch sends its operations only; the item it wrote is the answer (sized here when the client declined it).
  else if (verb === 'patch' && minimal) bytes = Buffer.byteLength(JSON.stringify(payload) ?? '');
  else bytes = answered.responseBytes;
  const itemCount = isRecord(payload) && typeof payload._count === 'number' ? payload._count : undefined;
  return requestCharge({
    operation,
    statusCode: answered.statusCode,
    bytes,
    ...(itemCount === undefined ? {} : { itemCount }),
    ...(answered.queryPlan ? { queryPlan: true } : {}),
    ...(answered.batch ? { batch: answered.batch } : {}),
  });
}

/**
 * Each batch operation's type (from the request body), outcome and item size, undefined when the body is unreadable.
 * Sets each result's `requestCharge`, which the SDK reports per operation as Cosmos DB answers it.
 */
export function chargeBatchResults(
  requestBody: readonly Buffer[],
  results: unknown[],
): BatchOperation[] | undefined {
  let inputs: unknown;
  try {
    inputs = JSON.parse(Buffer.concat(requestBody).toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(inputs)) return undefined;
  return results.map((result, index): BatchOperation => {
    const input: unknown = inputs[index];
    const operationType =
      isRecord(input) && typeof input.operationType === 'string' ? input.operationType : '';
    const statusCode = isRecord(result) && typeof result.statusCode === 'number' ? result.statusCode : 500;
    const written = isRecord(input) ? input.resourceBody : undefined;
    const answered = isRecord(result) ? result.resourceBody : undefined;
    const item = /^(create|upsert|replace)$/i.test(operationType) ? written : answered;
    const charged: BatchOperation = {
      operationType,
      statusCode,
      bytes: item === undefined ? 0 : Buffer.byteLength(JSON.stringify(item)),
    };
    if (isRecord(result)) result.requestCharge = batchOperationCharge(charged);
    return charged;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
