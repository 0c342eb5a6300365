// A transactional batch's documents on the local Cosmos DB: the stored ones, or a staged copy over them, and each
// operation run as the package's handlers run it (Patch included).
import { randomUUID } from 'node:crypto';
import {
  loadDefaultless,
  nodeOf,
  type CollectionNode,
  type CosmosAccount,
  type QueryParams,
  type StoredResource,
} from './cosmosdb-server-internals.js';

/** One operation of a batch request, as the SDK sends it (`partitionKey` is the JSON of the key). */
export interface BatchOperation {
  operationType?: unknown;
  id?: unknown;
  partitionKey?: unknown;
  ifMatch?: unknown;
  resourceBody?: unknown;
}

/** What one operation answered: its status and the document (or error) it returns. */
export interface OperationResult {
  statusCode: number;
  body?: Record<string, unknown>;
}

/** A container's documents as a batch reads and writes them: the stored ones, or a staged copy over them. */
export interface BatchDocuments {
  readonly [batchBrand]: true;
}
declare const batchBrand: unique symbol;

/** The container's documents, or undefined when it or its database is missing. */
export function batchDocuments(
  account: CosmosAccount,
  databaseIdOrRid: string,
  containerIdOrRid: string,
): BatchDocuments | undefined {
  const collection = nodeOf(account).database(databaseIdOrRid).collection(containerIdOrRid);
  return collection.read() === undefined ? undefined : (collection as unknown as BatchDocuments);
}

/**
 * A staged copy over the container's documents of one partition: operations run on it see each other's changes and
 * leave the stored documents as they are, so a batch can run every operation once without changing anything.
 */
export function stagedDocuments(stored: BatchDocuments): BatchDocuments {
  const real = stored as unknown as CollectionNode;
  const items = real.documents;
  // By id: every operation of a batch is in its one partition.
  const staged = new Map<string, StoredResource | null>();
  const current = (id: string, read: () => StoredResource | undefined) =>
    staged.has(id) ? (staged.get(id) ?? undefined) : read();
  const stage = (resource: StoredResource) => {
    staged.set(resource.id, resource);
    return resource;
  };
  const fail = (message: string, kind: 'conflict' | 'badRequest') =>
    Object.assign(new Error(message), { [kind]: true });
  const documents = {
    create(data: { id: string; [property: string]: unknown }): StoredResource {
      if (
        current(data.id, () =>
          items._item('/id', data.id, items._getPartition(data as StoredResource)).read(),
        )
      )
        throw fail('Resource with specified id already exists.', 'conflict');
      return stage({ ...data, _rid: `staged:${data.id}`, _etag: randomUUID(), _ts: nowSeconds() });
    },
    replace(data: StoredResource, original: StoredResource): StoredResource {
      if (items._getPartition(data) !== items._getPartition(original))
        throw fail('replacing the partition key is not allowed', 'badRequest');
      if (data.id !== original.id) throw fail('replacing id is not allowed', 'badRequest');
      return stage({
        ...data,
        _rid: original._rid,
        _self: original._self,
        _etag: randomUUID(),
        _ts: nowSeconds(),
      });
    },
    upsert(data: StoredResource): StoredResource {
      const old = current(data.id, () => items._item('/id', data.id, items._getPartition(data)).read());
      return old ? documents.replace(data, old) : documents.create(data);
    },
    delete(id: string): void {
      staged.set(id, null);
    },
    // A patch's condition is the one query an operation runs: over the one document it names.
    query(params: QueryParams): unknown {
      const named = Array.isArray(params.parameters)
        ? (params.parameters as { name?: unknown; value?: unknown }[]).find((p) => p.name === '@id')?.value
        : undefined;
      const document = typeof named === 'string' ? stagedRead(named) : undefined;
      return items
        ._getQuery(params.query)
        .exec(document ? [document] : [], { parameters: params.parameters });
    },
  };
  let partitionOfBatch: unknown;
  const stagedRead = (id: string) => current(id, () => real.document(id, partitionOfBatch).read());
  const copy = {
    read: () => real.read(),
    documents,
    document(id: string, partition: unknown) {
      partitionOfBatch = partition;
      return { read: () => stagedRead(id) };
    },
  };
  return copy as unknown as BatchDocuments;
}

/** Runs one operation of a batch as the package's handlers do (Patch included), on stored or staged documents. */
export function runBatchOperation(documents: BatchDocuments, operation: BatchOperation): OperationResult {
  const ops = loadDefaultless<DocumentOperationsModule>(
    '@vercel/cosmosdb-server/lib/handler/_document-operations.js',
  );
  switch (operation.operationType) {
    case 'Create':
      return ops.createOperation(documents, operation);
    case 'Upsert':
      return ops.upsertOperation(documents, operation);
    case 'Read':
      return ops.readOperation(documents, operation);
    case 'Delete':
      return ops.deleteOperation(documents, operation);
    case 'Replace':
      return ops.replaceOperation(documents, operation);
    case 'Patch': {
      const patch = loadDefaultless<PatchOperationsModule>(
        '@vercel/cosmosdb-server/lib/handler/_patch-operations.js',
      );
      const body = operation.resourceBody;
      const wrapped = isPlainRecord(body) && Array.isArray(body.operations);
      if (!Array.isArray(body) && !wrapped)
        return {
          statusCode: 400,
          body: { code: 'BadRequest', message: 'A Patch operation needs its operations.' },
        };
      return patch.patchOperation(documents, {
        id: operation.id,
        partitionKey: operation.partitionKey,
        ifMatch: operation.ifMatch,
        operations: wrapped ? body.operations : body,
        condition: wrapped && typeof body.condition === 'string' ? body.condition : undefined,
      });
    }
    default:
      return {
        statusCode: 400,
        body: {
          code: 'BadRequest',
          message: `Operation type '${String(operation.operationType)}' is not supported in Batch.`,
        },
      };
  }
}

interface DocumentOperationsModule {
  createOperation(documents: BatchDocuments, input: BatchOperation): OperationResult;
  upsertOperation(documents: BatchDocuments, input: BatchOperation): OperationResult;
  readOperation(documents: BatchDocuments, input: BatchOperation): OperationResult;
  deleteOperation(documents: BatchDocuments, input: BatchOperation): OperationResult;
  replaceOperation(documents: BatchDocuments, input: BatchOperation): OperationResult;
}

interface PatchOperationsModule {
  patchOperation(
    documents: BatchDocuments,
    input: {
      id: unknown;
      partitionKey: unknown;
      ifMatch: unknown;
      operations: unknown;
      condition: string | undefined;
    },
  ): OperationResult;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
