// The Cosmos DB adapter of ProfileFacts (container `profile-facts`, partition userId): fact items (kind 'fact', id =
// factId) and consolidation records (kind 'consolidation', id = consolidationId(...)) side by side, so one user's
// profile is one partition, read by single-partition queries and erased by one partition sweep.
import type { Container, SqlQuerySpec } from '@azure/cosmos';
import { z } from 'zod';
import {
  cosmosFailure,
  cosmosStatus,
  deleteItem,
  deletePartitionItems,
  deleteQueriedItems,
  queryItems,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { patchItem, writeOnVersion } from '../../cosmos/adapters/cosmos-patch.js';
import {
  APPLIED_CONSOLIDATION_TTL_SECONDS,
  consolidationId,
  consolidationRecordSchema,
  profileFactSchema,
  type ConsolidationRecord,
  type ProfileFact,
} from '../contracts.js';
import type { ProfileFacts } from '../profile-facts.js';

/** Either kind of item the container holds, told apart by `kind`. */
const profileItemSchema = z.discriminatedUnion('kind', [profileFactSchema, consolidationRecordSchema]);

export function createCosmosProfileFacts(container: Container): ProfileFacts {
  const what = 'the profile fact';
  const recordWhat = "the turn's consolidation record";

  async function readRecord(userId: string, id: string): Promise<ConsolidationRecord | undefined> {
    const read = await readItem(container, id, userId, recordWhat, profileItemSchema);
    return read?.resource.kind === 'consolidation' && read.resource.userId === userId
      ? read.resource
      : undefined;
  }

  return {
    async list(userId, options = {}) {
      const statuses = options.statuses;
      const query: SqlQuerySpec = {
        query:
          statuses === undefined
            ? "SELECT * FROM c WHERE c.kind = 'fact'"
            : "SELECT * FROM c WHERE c.kind = 'fact' AND ARRAY_CONTAINS(@statuses, c.status)",
        parameters: statuses === undefined ? [] : [{ name: '@statuses', value: [...statuses] }],
      };
      return sortOldestFirst(
        await queryItems(container, query, userId, 'the profile facts', profileFactSchema),
      );
    },

    async get(userId, factId) {
      const read = await readItem(container, factId, userId, what, profileItemSchema);
      return read?.resource.kind === 'fact' && read.resource.userId === userId
        ? { fact: read.resource, version: read.etag }
        : undefined;
    },

    async put(fact, version) {
      const written = await writeOnVersion(container, fact, fact.userId, version, what);
      return written === 'conflict' ? 'conflict' : 'written';
    },

    delete(userId, factId, version) {
      // A fact's id never names a consolidation record: deleting one by a fact id would undo a turn's idempotence.
      if (factId.startsWith('consolidation.')) return Promise.resolve(false);
      return deleteItem(container, factId, userId, what, version);
    },

    async fromSession(userId, sessionId) {
      const query: SqlQuerySpec = {
        query:
          "SELECT * FROM c WHERE c.kind = 'fact' AND EXISTS(SELECT VALUE s FROM s IN c.provenance WHERE s.sessionId = @sessionId)",
        parameters: [{ name: '@sessionId', value: sessionId }],
      };
      return sortOldestFirst(
        await queryItems(container, query, userId, "the conversation's profile facts", profileFactSchema),
      );
    },

    getConsolidation(userId, sessionId, chatMessageId) {
      return readRecord(userId, consolidationId(sessionId, chatMessageId));
    },

    async createConsolidation(record) {
      try {
        await container.items.create(record);
        return record;
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw cosmosFailure(`creating ${recordWhat}`, error);
      }
      // A redelivered turn decided again: the record written first is the one applied.
      const stored = await readRecord(record.userId, record.id);
      if (stored === undefined)
        throw cosmosFailure(`reading ${recordWhat}`, new Error('The record that conflicted is gone.'));
      return stored;
    },

    async markApplied(userId, recordId, appliedAt) {
      // A record deleted meanwhile (its conversation forgotten) stays deleted: nothing to mark.
      await patchItem(
        container,
        recordId,
        userId,
        [
          { op: 'set', path: '/appliedAt', value: appliedAt },
          { op: 'set', path: '/ttl', value: APPLIED_CONSOLIDATION_TTL_SECONDS },
        ],
        undefined,
        recordWhat,
      );
    },

    deleteConsolidations(userId, sessionId) {
      return deleteQueriedItems(
        container,
        {
          query: "SELECT VALUE c.id FROM c WHERE c.kind = 'consolidation' AND c.sessionId = @sessionId",
          parameters: [{ name: '@sessionId', value: sessionId }],
        },
        userId,
        "the conversation's consolidation records",
      );
    },

    deleteAll(userId) {
      return deletePartitionItems(container, userId, "the user's profile");
    },
  };
}

/**
 * Oldest first, by when each fact was created, then by id (a stable order for facts of the same instant). Sorted
 * here, not by ORDER BY: the query reads every matching fact anyway, and two sort keys would need a composite index.
 */
function sortOldestFirst(facts: ProfileFact[]): ProfileFact[] {
  return facts.sort(
    (a, b) => a.createdAt.localeCompare(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}
