// The state of a running turn, kept beside the session's working memory in the hot store (same container,
// same partition, 24 h TTL) so the orchestration's history holds only ids and small results: the prompt the
// turn started from, each LLM round's output and each tool call's result. Every write is idempotent, so an
// activity that runs again after a crash finds what it already did.
import type { Database } from '@azure/cosmos';
import { cosmosFailure, cosmosStatus, readItem } from '../cosmos/items.js';
import { HOT_CONVERSATIONS_CONTAINER } from '../cosmos/schema.js';
import { DependencyError } from '../errors.js';
import type { ChatMessage, LlmUsage, ToolCall } from '../llm/llm-gateway.js';

export interface TurnRef {
  userId: string;
  sessionId: string;
  chatMessageId: string;
}

export interface RoundRecord {
  round: number;
  content: string;
  reasoning: string;
  toolCalls: ToolCall[];
  finishReason: string;
  usage?: LlmUsage;
  /** seq the next activity starts from. */
  nextSeq: number;
}

export interface TurnRecord extends TurnRef {
  userText: string;
  postedAt: string;
  /** System prompt, the history that fitted the budget, and the new user message. */
  prompt: ChatMessage[];
  rounds: RoundRecord[];
}

export interface ToolResultRecord {
  round: number;
  index: number;
  toolCallId: string;
  name: string;
  arguments: string;
  result: string;
  isError: boolean;
}

export interface TurnStateStore {
  get(ref: TurnRef): Promise<TurnRecord | undefined>;
  /** Creates the record unless it exists; returns the stored one either way. */
  create(record: TurnRecord): Promise<TurnRecord>;
  /** Adds a round unless one with that number is stored; returns the stored round. */
  addRound(ref: TurnRef, round: RoundRecord): Promise<RoundRecord>;
  getToolResult(ref: TurnRef, round: number, index: number): Promise<ToolResultRecord | undefined>;
  putToolResult(ref: TurnRef, result: ToolResultRecord): Promise<void>;
}

interface TurnDocument extends TurnRecord {
  id: string;
  kind: 'turn';
}

interface ToolResultDocument extends ToolResultRecord, TurnRef {
  id: string;
  kind: 'tool-result';
}

const MAX_CONFLICT_RETRIES = 5;

export function createCosmosTurnStateStore(database: Database): TurnStateStore {
  const container = database.container(HOT_CONVERSATIONS_CONTAINER);
  const turnId = (ref: TurnRef) => `turn.${ref.chatMessageId}`;
  const toolId = (ref: TurnRef, round: number, index: number) =>
    `turn.${ref.chatMessageId}.round.${round}.tool.${index}`;

  return {
    async get(ref) {
      return (await readItem<TurnDocument>(container, turnId(ref), ref.sessionId, 'the turn'))?.resource;
    },

    async create(record) {
      const document: TurnDocument = { id: turnId(record), kind: 'turn', ...record };
      try {
        await container.items.create(document);
        return record;
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw cosmosFailure('storing the turn', error);
      }
      const stored = await readItem<TurnDocument>(container, document.id, record.sessionId, 'the turn');
      if (stored === undefined)
        throw new DependencyError('cosmos', 'The turn record vanished while being created.');
      return stored.resource;
    },

    async addRound(ref, round) {
      for (let attempt = 0; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
        const stored = await readItem<TurnDocument>(container, turnId(ref), ref.sessionId, 'the turn');
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
      return (
        await readItem<ToolResultDocument>(
          container,
          toolId(ref, round, index),
          ref.sessionId,
          'a tool result',
        )
      )?.resource;
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
