// Turns the in-memory Cosmos DB account into a plain JSON snapshot and back. Resources keep their system
// properties (`_rid`, `_etag`, `_ts`, `_self`), so ETags taken before a restart still match after it.
import { z } from 'zod';

import {
  storedResources,
  type CosmosAccount,
  type ItemStore,
  type ResourceNode,
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
    databaseRidCount: account.databases._ridCount,
    databases: storedResources(account.databases).map(([database, databaseResource]) => ({
      resource: databaseResource,
      containerRidCount: database.collections._ridCount,
      containers: storedResources(database.collections).map(([container, containerResource]) => ({
        resource: containerResource,
        documentRidCount: container.documents._ridCount,
        documents: storedResources(container.documents).map(([, document]) => document),
      })),
    })),
  };
}

/** Loads a snapshot into an empty account (the one the server was just created with). */
export function restoreSnapshot(account: CosmosAccount, snapshot: AccountSnapshot): void {
  if (account.databases._data.size > 0) throw new Error('restoreSnapshot needs an empty account.');
  for (const databaseSnapshot of snapshot.databases) {
    account.databases._set(databaseSnapshot.resource);
    const database = account.database(databaseSnapshot.resource.id);
    for (const containerSnapshot of databaseSnapshot.containers) {
      database.collections._set(containerSnapshot.resource);
      const container = database.collection(containerSnapshot.resource.id);
      for (const document of containerSnapshot.documents) container.documents._set(document);
      raiseRidCount(container.documents, containerSnapshot.documentRidCount);
    }
    raiseRidCount(database.collections, databaseSnapshot.containerRidCount);
  }
  raiseRidCount(account.databases, snapshot.databaseRidCount);
}

function raiseRidCount<TNode extends ResourceNode>(store: ItemStore<TNode>, savedCount: number): void {
  // Never below the number of stored resources, so a hand-edited file cannot make rids collide.
  store._ridCount = Math.max(store._ridCount, savedCount, store._data.size);
}
