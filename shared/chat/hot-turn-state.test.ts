// Turn records and stop records over the hot store's in-memory twin: rounds added once however often a step runs,
// tool results listed in order and per turn, the first stop kept, and another user's stop never counting.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryHotStore } from '../../test/support/in-memory-hot-store.js';
import type { RoundRecord, ToolResultRecord, TurnRecord } from './contracts/documents.js';
import type { TurnRef } from '../conversation/messages.js';
import { createHotTurnCancellations } from './hot-turn-cancellations.js';
import { createHotTurnState } from './hot-turn-state.js';

const ref = (): TurnRef => ({ userId: 'user_001', sessionId: randomUUID(), chatMessageId: randomUUID() });
const record = (turn: TurnRef): TurnRecord => ({
  ...turn,
  userText: 'hello',
  postedAt: '2026-11-26T10:00:00.000Z',
  history: null,
  rounds: [],
});
const round = (n: number): RoundRecord => ({
  round: n,
  content: `round ${n}`,
  reasoning: '',
  toolCalls: [],
  finishReason: 'tool_calls',
  nextSeq: 10 * (n + 1),
});
const result = (r: number, index: number): ToolResultRecord => ({
  round: r,
  index,
  toolCallId: `call-${r}-${index}`,
  name: 'search_knowledge_base',
  arguments: '{}',
  result: `result ${r}.${index}`,
  isError: false,
});

describe('turn records over the hot store', () => {
  it('creates the record with its first round and adds each later round once', async () => {
    const hot = new MemoryHotStore();
    const turns = createHotTurnState(hot);
    const turn = ref();
    expect(await turns.get(turn)).toBeUndefined();
    await turns.addRound(record(turn), round(0));
    // A retried first step (it had not read the record) keeps the round stored.
    expect(await turns.addRound(record(turn), { ...round(0), content: 'again' })).toEqual(round(0));
    const stored = await turns.get(turn);
    expect(stored?.rounds).toEqual([round(0)]);
    await turns.addRound(stored!, round(1));
    // Two steps racing from the same read: the round lands once.
    const read = await turns.get(turn);
    const raced = await Promise.all([turns.addRound(read!, round(2)), turns.addRound(read!, round(2))]);
    expect(raced).toEqual([round(2), round(2)]);
    expect((await turns.get(turn))?.rounds).toEqual([round(0), round(1), round(2)]);
    expect(await turns.get({ ...turn, sessionId: randomUUID() })).toBeUndefined();
  });

  it('lists a turn’s tool results by round then index, and not another turn’s', async () => {
    const hot = new MemoryHotStore();
    const turns = createHotTurnState(hot);
    const turn = ref();
    for (const [r, i] of [
      [10, 0],
      [2, 1],
      [2, 0],
      [0, 0],
    ] as const)
      await turns.putToolResult(turn, result(r, i));
    await turns.putToolResult({ ...turn, chatMessageId: randomUUID() }, result(1, 0));
    expect((await turns.listToolResults(turn)).map((x) => [x.round, x.index])).toEqual([
      [0, 0],
      [2, 0],
      [2, 1],
      [10, 0],
    ]);
    expect(await turns.getToolResult(turn, 2, 1)).toEqual(result(2, 1));
    expect(await turns.getToolResult(turn, 3, 0)).toBeUndefined();
  });
});

describe('stop records over the hot store', () => {
  it('keep the first request, and answer for that turn and owner only', async () => {
    const hot = new MemoryHotStore();
    const stops = createHotTurnCancellations(hot);
    const turn = ref();
    expect(await stops.isRequested(turn)).toBe(false);
    await stops.request(turn, '2026-11-26T10:00:00.000Z');
    await stops.request(turn, '2026-11-26T10:00:05.000Z');
    expect(await stops.isRequested(turn)).toBe(true);
    expect((await hot.read(turn.sessionId, `cancel.${turn.chatMessageId}`))?.value).toMatchObject({
      requestedAt: '2026-11-26T10:00:00.000Z',
    });
    expect(await stops.isRequested({ ...turn, userId: 'user_002' })).toBe(false);
    expect(await stops.isRequested({ ...turn, chatMessageId: randomUUID() })).toBe(false);
  });
});
