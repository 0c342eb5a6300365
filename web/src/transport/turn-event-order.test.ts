import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../../shared/streaming/contracts.js';
import { TurnEventOrder } from './turn-event-order';

const ids = { sessionId: 's', chatMessageId: 'c' };
const content = (seq: number, delta: string): ChatEvent => ({ type: 'content', delta, seq, ...ids });
const end = (seq: number): ChatEvent => ({ type: 'message-end', finishReason: 'stop', seq, ...ids });

describe('TurnEventOrder', () => {
  it('delivers events in seq order, once, whatever order and repeats they arrive in', () => {
    const order = new TurnEventOrder();
    expect(order.accept([content(2, 'b')])).toEqual([]);
    expect(order.hasGap).toBe(true);
    expect(order.accept([content(1, 'a'), content(2, 'b')]).map((e) => e.seq)).toEqual([1, 2]);
    expect(order.hasGap).toBe(false);
    expect(order.accept([content(1, 'a'), content(3, 'c')]).map((e) => e.seq)).toEqual([3]);
    expect(order.lastSeq).toBe(3);
  });

  it('stops at the turn’s last event and ignores anything after it', () => {
    const order = new TurnEventOrder();
    const delivered = order.accept([content(1, 'a'), end(2), content(3, 'late')]);
    expect(delivered.map((e) => e.type)).toEqual(['content', 'message-end']);
    expect(order.finished).toBe(true);
    expect(order.hasGap).toBe(false);
    expect(order.accept([content(4, 'later')])).toEqual([]);
  });
});
