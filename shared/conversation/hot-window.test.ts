// The hot window keeps the newest whole turns within its byte budget, so working memory stops growing.
import { describe, expect, it } from 'vitest';
import type { ConversationMessage } from './messages.js';
import { fitHotWindow, hotWindowBytes } from './hot-window.js';

function turn(id: string, text: string): ConversationMessage[] {
  return [
    { messageId: `${id}_user`, chatMessageId: id, role: 'user', content: text, timestamp: 't' },
    { messageId: `${id}_assistant`, chatMessageId: id, role: 'assistant', content: text, timestamp: 't' },
  ];
}
const size = (messages: readonly ConversationMessage[]) => Buffer.byteLength(JSON.stringify(messages)) - 2;

describe('fitHotWindow', () => {
  it('keeps everything that fits', () => {
    const messages = [...turn('a', 'one'), ...turn('b', 'two')];
    expect(fitHotWindow(messages, 10_000)).toEqual(messages);
  });

  it('drops the oldest whole turns beyond the budget, never half a turn', () => {
    const turns = Array.from({ length: 50 }, (_, i) => turn(`t${i}`, 'x'.repeat(100)));
    const all = turns.flat();
    const perTurn = turns[49]!.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);
    const kept = fitHotWindow(all, perTurn * 10 + 5);
    expect(kept).toEqual(turns.slice(-10).flat());
    expect(kept[0]?.role).toBe('user');
  });

  it('stays the same size however long the conversation grows', () => {
    const long = Array.from({ length: 2_000 }, (_, i) => turn(`t${i}`, `message ${i}`)).flat();
    const budget = hotWindowBytes(1_000);
    const sizes = [200, 1_000, 4_000].map((n) => size(fitHotWindow(long.slice(0, n), budget)));
    expect(sizes[1]).toBeLessThanOrEqual(budget);
    expect(Math.abs(sizes[2]! - sizes[1]!)).toBeLessThan(200);
  });

  it('keeps the newest turn even when it alone is larger than the budget', () => {
    const messages = [...turn('old', 'a'), ...turn('big', 'y'.repeat(5_000))];
    expect(fitHotWindow(messages, 100)).toEqual(turn('big', 'y'.repeat(5_000)));
  });
});
