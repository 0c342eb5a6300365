// A running turn's state in its session's hot store: the turn record (`turn.{chatMessageId}`, one round per model call
// that asked for tools, written on conditions), its tool results (`….round.{r}.tool.{i}`), its approvals' answers
// (`….approval.{id}`, made once), and the session's turn waiting for its user's yes (`turn-parked`).
import type { HotStore } from '../conversation/hot-store.js';
import { DependencyError } from '../errors.js';
import {
  toolResultDocumentSchema,
  turnDocumentSchema,
  type RoundRecord,
  type ToolResultDocument,
  type ToolResultRecord,
  type TurnDocument,
  type TurnRecord,
} from './contracts/documents.js';
import type { TurnRef } from '../conversation/messages.js';
import { fromHotEntry, toHotValue } from './hot-documents.js';
import type { StoredTurn, TurnStateStore } from './turn-state-store.js';

const MAX_CONFLICT_RETRIES = 5;
/** The session's turn that waits (or waited last) for its user's yes. */
const PARKED_KEY = 'turn-parked';

const turnKey = (ref: TurnRef) => `turn.${ref.chatMessageId}`;
const toolPrefix = (ref: TurnRef) => `turn.${ref.chatMessageId}.round.`;
const toolKey = (ref: TurnRef, round: number, index: number) => `${toolPrefix(ref)}${round}.tool.${index}`;

export function createHotTurnState(hot: HotStore): TurnStateStore {
  async function get(ref: TurnRef): Promise<StoredTurn | undefined> {
    const entry = await hot.read(ref.sessionId, turnKey(ref));
    if (entry === undefined) return undefined;
    const {
      id: _id,
      kind: _kind,
      ...record
    } = fromHotEntry(turnDocumentSchema, ref.sessionId, entry, 'the turn');
    return { ...record, version: entry.version };
  }

  /** Writes the record with the round added; false when another writer changed (or created) it first. */
  async function write(turn: TurnRecord | StoredTurn, round: RoundRecord): Promise<boolean> {
    const { version, ...record } = turn as TurnRecord & { version?: string };
    const document = (rounds: RoundRecord[]): TurnDocument => ({
      ...record,
      id: turnKey(turn),
      kind: 'turn',
      rounds,
    });
    const value = toHotValue(document(version === undefined ? [round] : [...record.rounds, round]));
    const written = await hot.write(
      turn.sessionId,
      turnKey(turn),
      value,
      version === undefined
        ? { kind: 'absent' }
        : // The record as read travels with its version, so the store may send only the new round.
          { kind: 'version', version, previous: toHotValue(document(record.rounds)) },
    );
    return written.kind === 'written';
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
          throw new DependencyError('hot-store', `The record of turn ${turn.chatMessageId} vanished.`);
        current = reread;
      }
      throw new DependencyError('hot-store', 'The turn record kept changing while a round was stored.');
    },

    async listToolResults(ref) {
      const entries = await hot.list(ref.sessionId, toolPrefix(ref));
      return entries
        .map((entry) =>
          toToolResult(fromHotEntry(toolResultDocumentSchema, ref.sessionId, entry, 'a tool result')),
        )
        .sort((a, b) => a.round - b.round || a.index - b.index);
    },

    async getToolResult(ref, round, index) {
      const entry = await hot.read(ref.sessionId, toolKey(ref, round, index));
      return entry === undefined
        ? undefined
        : toToolResult(fromHotEntry(toolResultDocumentSchema, ref.sessionId, entry, 'a tool result'));
    },

    async putToolResult(ref, result) {
      const document: ToolResultDocument = {
        id: toolKey(ref, result.round, result.index),
        kind: 'tool-result',
        userId: ref.userId,
        sessionId: ref.sessionId,
        chatMessageId: ref.chatMessageId,
        ...result,
      };
      await hot.write(ref.sessionId, document.id, toHotValue(document), { kind: 'any' });
    },

    async recordApprovalAnswer(ref, approvalId, answer) {
      const value = {
        kind: 'approval-answer',
        userId: ref.userId,
        chatMessageId: ref.chatMessageId,
        ...answer,
      };
      const key = `turn.${ref.chatMessageId}.approval.${approvalId}`;
      const written = await hot.write(ref.sessionId, key, value, { kind: 'absent' });
      return written.kind === 'written';
    },

    async markParked(ref) {
      const value = { kind: 'parked-turn', userId: ref.userId, chatMessageId: ref.chatMessageId };
      await hot.write(ref.sessionId, PARKED_KEY, value, { kind: 'any' });
    },

    async parkedTurn(sessionId) {
      const entry = await hot.read(sessionId, PARKED_KEY);
      const chatMessageId = entry?.value.chatMessageId;
      return typeof chatMessageId === 'string' ? chatMessageId : undefined;
    },
  };
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
