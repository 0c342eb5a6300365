// How many Cosmos DB requests one chat turn makes on its own path, counted by the local Cosmos server: from the POST
// to the first `content` event sent live, and to `message-end`. Counts, not times: the same turn makes the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import type { TurnEventSink } from '../../shared/streaming/turn-event-sink.js';
import { ChatClient, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';

/** Upper bounds of the turn's requests (the third turn of a conversation, default settings). */
const BEFORE_FIRST_CONTENT = 10;
const TO_MESSAGE_END = 18;

let runtime: LocalRuntime;
let client: ChatClient;
let listener: RealtimeListener;
/** The server's request count as the turn's first event of each type was sent live. */
let sentAt: Map<ChatEvent['type'], number>;

beforeAll(async () => {
  runtime = await startTestRuntime();
  // Counts as each batch goes to Web PubSub: every event in it was stored, by the requests counted so far.
  const sink: TurnEventSink = runtime.app.chat.turn.sink;
  runtime.app.chat.turn.sink = {
    send(turn, events) {
      const requests = runtime.cosmos.stats().requests;
      for (const event of events) if (!sentAt.has(event.type)) sentAt.set(event.type, requests);
      return sink.send(turn, events);
    },
  };
  client = new ChatClient(runtime.url, 'user_001');
  listener = await client.listen();
}, 60_000);

afterAll(async () => {
  listener?.stop();
  await runtime?.stop();
});

/** Sends one message after the runtime went quiet; the requests counted when its events went out. */
async function countedTurn(sessionId: string, text: string): Promise<Map<ChatEvent['type'], number>> {
  await settle(runtime);
  sentAt = new Map();
  runtime.cosmos.resetStats();
  const chatMessageId = await client.send(sessionId, text);
  const events = await listener.waitForTerminal(chatMessageId, 30_000);
  expect(events.at(-1)?.type).toBe('message-end');
  return sentAt;
}

describe("the Cosmos DB requests of a turn's own path", () => {
  it('stay within their bounds before the first content and up to message-end', async () => {
    const sessionId = await client.startSession();
    await countedTurn(sessionId, 'The first message of the conversation.');
    await countedTurn(sessionId, 'The second one.');
    const third = await countedTurn(sessionId, 'And the third.');
    const beforeContent = third.get('content');
    const toEnd = third.get('message-end');
    expect(beforeContent).toBeDefined();
    expect(toEnd).toBeDefined();
    expect(beforeContent).toBeLessThanOrEqual(BEFORE_FIRST_CONTENT);
    expect(toEnd).toBeLessThanOrEqual(TO_MESSAGE_END);
  }, 120_000);
});
