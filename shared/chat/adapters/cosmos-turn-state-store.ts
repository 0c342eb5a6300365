// The Cosmos DB adapter of TurnStateStore: the turn record (`turn.{chatMessageId}`) and one document per tool
// result (`turn.{chatMessageId}.round.{r}.tool.{i}`) in the hot container, in the session's partition, with its
// 24 h TTL. The record is created with its first round and grows by one round per model call that asked for
// tools, written with If-Match so a concurrent retry adds nothing.
import type { Container } from '@azure/cosmos';
import { cosmosFailure, cosmosStatus, queryItems, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { guardedItem } from '../../cosmos/adapters/guarded-item.js';
import { DependencyError } from '../../errors.js';
import {
  toolResultDocumentSchema,
  turnDocumentSchema,
  type RoundRecord,
  type ToolResultDocument,
  type ToolResultRecord,
  type TurnDocument,
  type TurnRecord,
} from '../contracts/documents.js';
import type { TurnRef } from '../../conversation/messages.js';
import type { StoredTurn, TurnStateStore } from '../turn-state-store.js';

const MAX_CONFLICT_RETRIES = 5;

const TOOL_RESULTS_QUERY =
  "SELECT * FROM c WHERE c.sessionId = @s AND c.chatMessageId = @m AND c.kind = 'tool-result'";

export function createCosmosTurnStateStore(container: Container): TurnStateStore {
  const turnId = (ref: TurnRef) => `turn.${ref.chatMessageId}`;
  const toolId = (ref: TurnRef, round: number, index: number) =>
    `turn.${ref.chatMessageId}.round.${round}.tool.${index}`;

  async function get(ref: TurnRef): Promise<StoredTurn | undefined> {
    const stored = await readItem(container, turnId(ref), ref.sessionId, 'the turn', turnDocumentSchema);
    return stored === undefined ? undefined : { ...toRecord(stored.resource), version: stored.etag };
  }

  /** Writes the record with the round added; false when another writer changed (or created) it first. */
  async function write(turn: TurnRecord | StoredTurn, round: RoundRecord): Promise<boolean> {
    const { version, ...record } = turn as TurnRecord & { version?: string };
    const document: TurnDocument = {
      ...record,
      id: turnId(turn),
      kind: 'turn',
      rounds: version === undefined ? [round] : [...record.rounds, round],
    };
    const stored =
      version === undefined
        ? undefined
        : { item: guardedItem(container, document.id, turn.sessionId), version };
    try {
      if (stored === undefined) await container.items.create(document);
      else
        await stored.item.replace(document, {
          accessCondition: { type: 'IfMatch', condition: stored.version },
        });
      return true;
    } catch (error) {
      const status = cosmosStatus(error);
      if (status === 409 || status === 412) return false;
      throw cosmosFailure('storing a round of the turn', error);
    }
  }

  return {
    get,

    async addRound(turn, round) {
      let current: TurnRecord | StoredTurn = turn;
      for (let attempt = 0; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
        const existing =
          'version' in current ? current.rounds.find((r) => r.round === round.round) : undefined;
        if (existing) return existing;
        if (await write(current, round)) return round;
        const reread = await get(turn);
        if (reread === undefined)
          throw new DependencyError('cosmos', `The record of turn ${turn.chatMessageId} vanished.`);
        current = reread;
      }
      throw new DependencyError('cosmos', 'The turn record kept changing while a round was stored.');
    },

    async listToolResults(ref) {
      const documents = await queryItems(
        container,
        {
          query: TOOL_RESULTS_QUERY,
          parameters: [
            { name: '@s', value: ref.sessionId },
            { name: '@m', value: ref.chatMessageId },
          ],
        },
        ref.sessionId,
        `the tool results of turn '${ref.chatMessageId}'`,
        toolResultDocumentSchema,
      );
      return documents.map(toToolResult).sort((a, b) => a.round - b.round || a.index - b.index);
    },

    async getToolResult(ref, round, index) {
      const stored = await readItem(
        container,
        toolId(ref, round, index),
        ref.sessionId,
        'a tool result',
        toolResultDocumentSchema,
      );
      return stored === undefined ? undefined : toToolResult(stored.resource);
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

function toRecord(document: TurnDocument): TurnRecord {
  const { id: _id, kind: _kind, ...record } = document;
  return record;
}

function toToolResult(document: ToolResultDocument): ToolResultRecord {
  const {
    id: _id,
    kind: _kind,
    userId: _user,
    sessionId: _session,
    chatMessageId: _turn,
    ...result
  } = document;
  return result;
}
