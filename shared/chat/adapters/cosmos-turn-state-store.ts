// The Cosmos DB adapter of TurnStateStore: the turn record (`turn.{chatMessageId}`) and one document per tool
// result (`turn.{chatMessageId}.round.{r}.tool.{i}`) in the hot container, in the session's partition, with its
// 24 h TTL. The record grows by one round per LLM call, written with If-Match so a concurrent retry adds nothing.
import type { Container } from '@azure/cosmos';
import { cosmosFailure, cosmosStatus, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { DependencyError } from '../../errors.js';
import {
  toolResultDocumentSchema,
  turnDocumentSchema,
  type ToolResultDocument,
  type TurnDocument,
  type TurnRef,
} from '../contracts.js';
import type { TurnStateStore } from '../turn-state-store.js';

const MAX_CONFLICT_RETRIES = 5;

export function createCosmosTurnStateStore(container: Container): TurnStateStore {
  const turnId = (ref: TurnRef) => `turn.${ref.chatMessageId}`;
  const toolId = (ref: TurnRef, round: number, index: number) =>
    `turn.${ref.chatMessageId}.round.${round}.tool.${index}`;

  return {
    async get(ref) {
      const stored = await readItem(container, turnId(ref), ref.sessionId, 'the turn', turnDocumentSchema);
      return stored === undefined ? undefined : toRecord(stored.resource);
    },

    async create(record) {
      const document: TurnDocument = { id: turnId(record), kind: 'turn', ...record };
      try {
        await container.items.create(document);
        return record;
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw cosmosFailure('storing the turn', error);
      }
      const stored = await readItem(container, document.id, record.sessionId, 'the turn', turnDocumentSchema);
      if (stored === undefined)
        throw new DependencyError('cosmos', 'The turn record vanished while being created.');
      return toRecord(stored.resource);
    },

    async addRound(ref, round) {
      for (let attempt = 0; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
        const stored = await readItem(container, turnId(ref), ref.sessionId, 'the turn', turnDocumentSchema);
        if (stored === undefined)
          throw new DependencyError('cosmos', `No turn record for ${ref.chatMessageId}.`);
        const existing = stored.resource.rounds.find((r) => r.round === round.round);
        if (existing) return existing;
        const next = { ...stored.resource, rounds: [...stored.resource.rounds, round] };
        try {
          await container
            .item(next.id, ref.sessionId)
            .replace(next, { accessCondition: { type: 'IfMatch', condition: stored.etag } });
          return round;
        } catch (error) {
          if (cosmosStatus(error) !== 412) throw cosmosFailure('storing the round', error);
        }
      }
      throw new DependencyError('cosmos', 'The turn record kept changing while a round was stored.');
    },

    async getToolResult(ref, round, index) {
      const stored = await readItem(
        container,
        toolId(ref, round, index),
        ref.sessionId,
        'a tool result',
        toolResultDocumentSchema,
      );
      if (stored === undefined) return undefined;
      const {
        id: _id,
        kind: _kind,
        userId: _user,
        sessionId: _session,
        chatMessageId: _turn,
        ...result
      } = stored.resource;
      return result;
    },

    async putToolResult(ref, result) {
      const document: ToolResultDocument = {
        id: toolId(ref, result.round, result.index),
        kind: 'tool-result',
        userId: ref.userId,
        sessionId: ref.sessionId,
        chatMessageId: ref.chatMessageId,
        ...result,
      };
      try {
        await container.items.upsert(document);
      } catch (error) {
        throw cosmosFailure('storing the tool result', error);
      }
    },
  };
}

function toRecord(document: TurnDocument) {
  const { id: _id, kind: _kind, ...record } = document;
  return record;
}
