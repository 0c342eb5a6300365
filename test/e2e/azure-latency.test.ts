// A turn under the Azure latency model (every local service answering late, as in Azure): the answers of two
// messages posted back to back in one session still arrive whole, once, in order, over WebSocket and SSE alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import { ChatClient, assembleText, oneTo, seqs, type RealtimeListener } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';

function types(events: readonly ChatEvent[]): string[] {
  return events.map((event) => event.type);
}

describe('a chat turn under the Azure latency model', () => {
  let runtime: LocalRuntime;
  let client: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    runtime = await startTestRuntime({
      settings: {
        LOCAL_AZURE_LATENCY: 'azure',
        LOCAL_AZURE_LATENCY_SEED: '7',
        STREAM_FLUSH_MAX_CHARS: '16',
      },
    });
    client = new ChatClient(runtime.url, 'user_002');
    live = await client.listen();
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
  });

  it('streams each answer whole and in order, and commits the session in order', async () => {
    const sessionId = await client.startSession();
    const first = await client.send(sessionId, 'reply with 30 words');
    const second = await client.send(sessionId, 'reply with 20 words');
    const [firstLive, secondLive, firstSse, secondSse] = await Promise.all([
      live.waitForTerminal(first),
      live.waitForTerminal(second),
      client.stream(sessionId, first),
      client.stream(sessionId, second),
    ]);

    for (const [events, words] of [
      [firstLive, 30],
      [secondLive, 20],
    ] as const) {
      expect(seqs(events)).toEqual(oneTo(events.length));
      expect(types(events)[0]).toBe('message-start');
      expect(types(events).at(-1)).toBe('message-end');
      expect(new Set(types(events).slice(1, -1))).toEqual(new Set(['content']));
      expect(assembleText(events).trim().split(/\s+/)).toHaveLength(words);
    }
    expect(firstSse.map((frame) => frame.data)).toEqual(firstLive);
    expect(secondSse.map((frame) => frame.data)).toEqual(secondLive);

    const memory = await runtime.app.chat.turn.workingMemory.load('user_002', sessionId);
    expect(memory.messages.map((message) => [message.messageId, message.content])).toEqual([
      [`${first}_user`, 'reply with 30 words'],
      [`${first}_assistant`, assembleText(firstLive)],
      [`${second}_user`, 'reply with 20 words'],
      [`${second}_assistant`, assembleText(secondLive)],
    ]);
  });
});
