// The Cosmos DB adapter of ProfileFacts (container `profile-facts`, partition userId): fact items (kind 'fact', id =
// factId), consolidation records (kind 'consolidation') and the active facts' copy (active-facts.ts) side by side,
// so one user's profile is one partition, read by point reads and single-partition queries, erased by one sweep.
import type { Container, PatchOperation, SqlParameter, SqlQuerySpec } from '@azure/cosmos';
import { z } from 'zod';
import {
  cosmosFailure,
  cosmosStatus,
  deletePartitionItems,
  deleteQueriedItems,
  queryItems,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';
import { outsideGaps, withinGaps } from '../../cosmos/adapters/cosmos-gaps.js';
import {
  consolidationId,
  consolidationRecordSchema,
  profileFactSchema,
  type ConsolidationRecord,
  type ProfileFact,
} from '../contracts.js';
import type { ConsolidationQuery, ProfileFacts } from '../profile-facts.js';
import { inScopes } from '../../conversation/memory-scope.js';
import { activeFactsCopy } from './active-facts.js';
import { scopeCondition } from './scope-condition.js';

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

  const copy = activeFactsCopy(container, {
    async activeFacts(userId) {
      return queryItems(
        container,
        { query: "SELECT * FROM c WHERE c.kind = 'fact' AND c.status = 'active'" },
        userId,
        'the active profile facts',
        profileFactSchema,
      );
    },
  });

  return {
    async list(userId, options = {}) {
      const { statuses, scopes } = options;
      // The active ones alone (a new conversation's prompt, the memory panel): their copy, by a point read, then
      // the scopes asked for.
      if (statuses?.length === 1 && statuses[0] === 'active') {
        const active = await copy.read(userId);
        return sortOldestFirst(
          scopes === undefined ? active : active.filter((fact) => inScopes(fact, scopes)),
        );
      }
      const conditions = ["c.kind = 'fact'"];
      const parameters: SqlParameter[] = [];
      if (options.statuses !== undefined) {
        conditions.push('ARRAY_CONTAINS(@statuses, c.status)');
        parameters.push({ name: '@statuses', value: [...options.statuses] });
      }
      if (options.scopes !== undefined) {
        // The same selection as the copy's filter above (inScopes), as SQL.
        const scope = scopeCondition(options.scopes);
        conditions.push(scope.sql);
        parameters.push(...scope.parameters);
      }
      const query: SqlQuerySpec = { query: `SELECT * FROM c WHERE ${conditions.join(' AND ')}`, parameters };
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
      return (await copy.write(fact, version)) ? 'written' : 'conflict';
    },

    delete(userId, factId, version) {
      // A fact's id never names a consolidation record: deleting one by a fact id would undo a turn's idempotence.
      if (factId.startsWith('consolidation.')) return Promise.resolve(false);
      return copy.remove(userId, factId, version);
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

    async consolidationStart(userId, sessionId, chatMessageId, options = {}) {
      // Point reads, no query: the active facts' copy and, when the turn may have been consolidated before, its record.
      const [active, record] = await Promise.all([
        copy.read(userId),
        options.record === false ? undefined : readRecord(userId, consolidationId(sessionId, chatMessageId)),
      ]);
      return { record, active: sortOldestFirst(active) };
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

    async markApplied(userId, recordId, appliedAt, summaryAfter) {
      // A record deleted meanwhile (its conversation forgotten) stays deleted: nothing to mark. No ttl: the record
      // is kept while its conversation is, since a branch may come back to its turn.
      const operations: PatchOperation[] = [{ op: 'set', path: '/appliedAt', value: appliedAt }];
      if (summaryAfter !== undefined)
        operations.push({ op: 'set', path: '/summaryAfter', value: summaryAfter });
      await patchItem(container, recordId, userId, operations, undefined, recordWhat);
    },

    async markWithdrawn(userId, recordId, withdrawnAt) {
      // Applied again: the mark goes only where it is (a redelivery finds it gone and changes nothing).
      await patchItem(
        container,
        recordId,
        userId,
        withdrawnAt === undefined
          ? [{ op: 'remove', path: '/withdrawnAt' }]
          : [{ op: 'set', path: '/withdrawnAt', value: withdrawnAt }],
        withdrawnAt === undefined ? 'FROM c WHERE IS_DEFINED(c.withdrawnAt)' : undefined,
        recordWhat,
      );
    },

    async findConsolidations(userId, sessionId, query) {
      if (query.within?.length === 0) return [];
      return queryItems(
        container,
        consolidationQuery(sessionId, query),
        userId,
        "the conversation's consolidation records",
        consolidationRecordSchema,
      );
    },

    consolidationsChanging(userId, factId) {
      return queryItems(
        container,
        {
          query:
            "SELECT * FROM c WHERE c.kind = 'consolidation' AND EXISTS(SELECT VALUE ch FROM ch IN c.changes WHERE ch.factId = @factId OR ch.newFactId = @factId)",
          parameters: [{ name: '@factId', value: factId }],
        },
        userId,
        'the consolidation records naming a fact',
        consolidationRecordSchema,
      );
    },

    async setChanges(userId, recordId, changes) {
      await patchItem(
        container,
        recordId,
        userId,
        [{ op: 'set', path: '/changes', value: changes }],
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

/**
 * The query of findConsolidations: the conversation's records by the ordinal of their user message, each range a
 * pair of parameters (cosmos-gaps.ts), the text never built from data.
 */
function consolidationQuery(sessionId: string, query: ConsolidationQuery): SqlQuerySpec {
  const ordinal = 'c.source.ordinal';
  const within = query.within ? withinGaps(ordinal, query.within) : undefined;
  const outside = outsideGaps(ordinal, query.outside ?? []);
  const parameters: SqlParameter[] = [
    { name: '@sessionId', value: sessionId },
    { name: '@before', value: query.before },
    ...(within?.parameters ?? []),
    ...outside.parameters,
    ...(query.limit === undefined ? [] : [{ name: '@limit', value: Math.max(1, Math.floor(query.limit)) }]),
  ];
  const conditions = [
    "c.kind = 'consolidation'",
    'c.sessionId = @sessionId',
    `${ordinal} < @before${within?.sql ?? ''}${outside.sql}`,
    ...(query.withdrawn === undefined
      ? []
      : [query.withdrawn ? 'IS_DEFINED(c.withdrawnAt)' : 'NOT IS_DEFINED(c.withdrawnAt)']),
    ...(query.changed ? ['ARRAY_LENGTH(c.changes) > 0'] : []),
    ...(query.summarised ? ['IS_DEFINED(c.summaryAfter)'] : []),
  ];
  const top = query.limit === undefined ? '' : 'TOP @limit ';
  return {
    query: `SELECT ${top}* FROM c WHERE ${conditions.join(' AND ')} ORDER BY ${ordinal} ${query.order === 'asc' ? 'ASC' : 'DESC'}`,
    parameters,
  };
}
