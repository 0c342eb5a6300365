// Turns the in-memory Cosmos DB account into a plain JSON snapshot and back. Resources keep their system
// properties (`_rid`, `_etag`, `_ts`, `_self`), so ETags taken before a restart still match after it.
import { z } from 'zod';

import {
  containers,
  databases,
  findContainer,
  type CosmosAccount,
  type ResourceStore,
} from './cosmosdb-server-internals.js';

export const SNAPSHOT_FORMAT = 'local-cosmos-snapshot';
export const SNAPSHOT_VERSION = 1;

const storedResourceSchema = z.looseObject({
  id: z.string(),
  _rid: z.string(),
  _etag: z.string().optional(),
  _ts: z.number().optional(),
  _self: z.string().optional(),
});

const ridCountSchema = z.number().int().nonnegative();

const containerSnapshotSchema = z.object({
  resource: storedResourceSchema,
  documentRidCount: ridCountSchema,
  documents: z.array(storedResourceSchema),
});

const databaseSnapshotSchema = z.object({
  resource: storedResourceSchema,
  containerRidCount: ridCountSchema,
  containers: z.array(containerSnapshotSchema),
});

export const accountSnapshotSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  version: z.literal(SNAPSHOT_VERSION),
  savedAt: z.string(),
  databaseRidCount: ridCountSchema,
  databases: z.array(databaseSnapshotSchema),
});

export type AccountSnapshot = z.infer<typeof accountSnapshotSchema>;

export function takeSnapshot(account: CosmosAccount, savedAt: Date): AccountSnapshot {
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    savedAt: savedAt.toISOString(),
    databaseRidCount: databases(account).ridCount,
    databases: captureDatabases(account),
  };
}

/** The account's databases, containers and documents as of now (lists copied; documents never change in place). */
function captureDatabases(account: CosmosAccount): AccountSnapshot['databases'] {
  return databases(account)
    .list()
    .map((database) => {
      const containerStore = containers(account, database.id);
      return {
        resource: database,
        containerRidCount: containerStore.ridCount,
        containers: containerStore.list().map((container) => {
          const documents = documentsOf(account, database.id, container.id);
          return { resource: container, documentRidCount: documents.ridCount, documents: documents.list() };
        }),
      };
    });
}

/**
 * The snapshot as JSON text in pieces (one per document), for writing in chunks while requests go on. The account's
 * lists are copied now; documents are never changed in place (the package stores a new object on every write), so
 * the pieces describe the account as of this call however late they are produced.
 */
export function snapshotPieces(account: CosmosAccount, savedAt: Date): Iterable<string> {
  const captured = captureDatabases(account);
  const head = {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    savedAt: savedAt.toISOString(),
    databaseRidCount: databases(account).ridCount,
  };
  return (function* () {
    yield `${JSON.stringify(head).slice(0, -1)},"databases":[`;
    for (const [d, database] of captured.entries()) {
      yield `${d > 0 ? ',' : ''}{"resource":${JSON.stringify(database.resource)},"containerRidCount":${database.containerRidCount},"containers":[`;
      for (const [c, container] of database.containers.entries()) {
        yield `${c > 0 ? ',' : ''}{"resource":${JSON.stringify(container.resource)},"documentRidCount":${container.documentRidCount},"documents":[`;
        for (const [i, document] of container.documents.entries()) {
          yield `${i > 0 ? ',' : ''}${JSON.stringify(document)}`;
        }
        yield ']}';
      }
      yield ']}';
    }
    yield ']}';
  })();
}

/** Loads a snapshot into an empty account (the one the server was just created with). */
export function restoreSnapshot(account: CosmosAccount, snapshot: AccountSnapshot): void {
  const databaseStore = databases(account);
  if (databaseStore.size > 0) throw new Error('restoreSnapshot needs an empty account.');
  for (const databaseSnapshot of snapshot.databases) {
    databaseStore.insert(databaseSnapshot.resource);
    const containerStore = containers(account, databaseSnapshot.resource.id);
    for (const containerSnapshot of databaseSnapshot.containers) {
      containerStore.insert(containerSnapshot.resource);
      const documents = documentsOf(account, databaseSnapshot.resource.id, containerSnapshot.resource.id);
      for (const document of containerSnapshot.documents) documents.insert(document);
      raiseRidCount(documents, containerSnapshot.documentRidCount);
    }
    raiseRidCount(containerStore, databaseSnapshot.containerRidCount);
  }
  raiseRidCount(databaseStore, snapshot.databaseRidCount);
}

function documentsOf(account: CosmosAccount, databaseId: string, containerId: string): ResourceStore {
  const container = findContainer(account, databaseId, containerId);
  if (!container) throw new Error(`Container '${databaseId}/${containerId}' does not exist.`);
  return container.documents;
}

function raiseRidCount(store: ResourceStore, savedCount: number): void {
  // Never below the number of stored resources, so a hand-edited file cannot make rids collide.
  store.raiseRidCount(Math.max(savedCount, store.size));
}
