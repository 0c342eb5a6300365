// How many Cosmos DB requests one chat turn makes on its own path, counted by the local Cosmos server: from the POST
// to the first `content` event sent live, and to `message-end`. The model holds its answer after the first token
// until that event is out, so what ends with the model call (its accounting) never races it: counts, not times.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { HOT_CONVERSATIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import { CONVERSATION_MESSAGES_CONTAINER, SESSION_DIGEST_ID } from '../../shared/history/contracts.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import type { TurnEventSink } from '../../shared/streaming/turn-event-sink.js';
import { ChatClient, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
  type ScriptedReply,
} from '../support/scripted-model.js';

/**
 * Upper bounds of the turn's requests (the third turn of a conversation, default settings), as measured: the POST's
 * batch (the posted message), the round's one read (working memory, which carries the stop and delete marks and shows
 * that so short a conversation has no digest to read), `message-start` and the first `content` stored; then
 * `message-end` stored, working memory committed and the conversation's header touched (7), and one `content` batch
 * more when a busy machine lets the coalescer flush the rest of the answer in two. A request more fails the test.
 * TURN_REQUESTS=1 prints them.
 */
const BEFORE_FIRST_CONTENT = 4;
const TO_MESSAGE_END = 8;

let runtime: LocalRuntime;
let model: ScriptedModel;
let client: ChatClient;
let listener: RealtimeListener;
/** The server's request count as the turn's first event of each type was sent live. */
let sentAt: Map<ChatEvent['type'], number>;
/** The server's requests by container and operation as each first event went out (printed with TURN_REQUESTS=1). */
let byContainerAt: Map<ChatEvent['type'], Record<string, { requests: number }>>;
/** Lets the model go on past its first token. */
let releaseModel: () => void = () => undefined;

/** The history and memory workers' structured calls, answered as their schemas ask. */
function structured(request: ChatCompletionRequest): object {
  const name = request.response_format?.json_schema?.name;
  if (name === 'memory_profile_changes') return { add: [], reaffirm: [], replace: [], retract: [] };
  if (name === 'conversation_summary')
    return { summary: 'A short talk.', themes: [], persons: [], places: [], user_sentiment: 'neutral' };
  if (name === 'exchange_index') return { line: 'A short talk', tags: [], title: 'Talk' };
  if (name === 'session_summary') return { summary: 'Earlier turns.' };
  throw new Error(`unexpected structured request ${String(name)}`);
}

function reply(request: ChatCompletionRequest): ScriptedReply {
  if (request.stream !== true) return { content: JSON.stringify(structured(request)) };
  const until = new Promise<void>((resolve) => (releaseModel = resolve));
  // The role, then the first word; the rest once the first content event has gone out.
  return { content: 'An answer of a few words for the count.', hold: { afterChunks: 2, until } };
}

beforeAll(async () => {
  model = await startScriptedModel(reply);
  // The stop watch of a model stream polls at its interval: past a minute, no poll falls inside a turn's count.
  runtime = await startTestRuntime({ settings: { ...model.settings, CHAT_CANCEL_POLL_MS: '60000' } });
  // Counts as each batch goes to Web PubSub: every event in it was stored, by the requests counted so far.
  const sink: TurnEventSink = runtime.app.chat.turn.sink;
  runtime.app.chat.turn.sink = {
    send(turn, events) {
      const stats = runtime.cosmos.stats();
      for (const event of events)
        if (!sentAt.has(event.type)) {
          sentAt.set(event.type, stats.requests);
          byContainerAt.set(event.type, stats.byContainer);
        }
      if (events.some((event) => event.type === 'content')) releaseModel();
      return sink.send(turn, events);
    },
  };
  client = new ChatClient(runtime.url, 'user_001');
  listener = await client.listen();
}, 60_000);

afterAll(async () => {
  listener?.stop();
  await runtime?.stop();
  await model?.close();
});

/** Sends one message after the runtime went quiet; the requests counted when its events went out. */
async function countedTurn(sessionId: string, text: string): Promise<Map<ChatEvent['type'], number>> {
  await settle(runtime);
  sentAt = new Map();
  byContainerAt = new Map();
  runtime.cosmos.resetStats();
  const chatMessageId = await client.send(sessionId, text);
  const events = await listener.waitForTerminal(chatMessageId, 30_000);
  expect(events.at(-1)?.type).toBe('message-end');
  if (process.env.TURN_REQUESTS === '1') {
    await settle(runtime);
    const log = [...byContainerAt].map(([type, by]) => `${type}: ${JSON.stringify(by)}`);
    log.push(`settled: ${JSON.stringify(runtime.cosmos.stats().byContainer)}`);
    console.warn(log.join('\n'));
  }
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

  it('read and write working memory once when it keeps its older messages in a base', async () => {
    const sessionId = await client.startSession();
    // Two messages that pass working memory's tail between them: the second's commit writes the window to a base.
    const long = Array.from({ length: 800 }, (_, i) => `word${i}`).join(' ');
    await countedTurn(sessionId, long);
    await countedTurn(sessionId, long);
    const hot = runtime.clients.database.container(HOT_CONVERSATIONS_CONTAINER);
    const { resources: bases } = await hot.items
      .query<string>("SELECT VALUE c.id FROM c WHERE STARTSWITH(c.id, 'wm-base.')", {
        partitionKey: sessionId,
      })
      .fetchAll();
    expect(bases).toHaveLength(1);
    await countedTurn(sessionId, 'The third one.');
    // The base comes from the process's cache: working memory costs the turn one read and one write, as in a
    // short conversation; and working memory says there is no digest to read, however long the text.
    const fourth = await countedTurn(sessionId, 'And the fourth.');
    expect(
      Object.keys(byContainerAt.get('content') ?? {}).filter((name) =>
        name.startsWith(`${CONVERSATION_MESSAGES_CONTAINER} `),
      ),
    ).toEqual([]);
    expect(fourth.get('content')).toBeLessThanOrEqual(BEFORE_FIRST_CONTENT);
    expect(fourth.get('message-end')).toBeLessThanOrEqual(TO_MESSAGE_END);
    const hotRequests = (at: ChatEvent['type']) =>
      Object.entries(byContainerAt.get(at) ?? {})
        .filter(([name]) => name.startsWith(`${HOT_CONVERSATIONS_CONTAINER} `))
        .map(([name, { requests }]) => `${name}: ${requests}`);
    expect(hotRequests('content')).toEqual([`${HOT_CONVERSATIONS_CONTAINER} item.read: 1`]);
    expect(hotRequests('message-end').sort()).toEqual([
      `${HOT_CONVERSATIONS_CONTAINER} item.patch: 1`,
      `${HOT_CONVERSATIONS_CONTAINER} item.read: 1`,
    ]);
  }, 120_000);

  it('stay within them once the conversation has a digest, which the process holds', async () => {
    const sessionId = await client.startSession();
    // Past half the prompt budget of text (about 1,900 tokens a message): the history worker folds the oldest turns
    // into the digest, twice over eight turns, marking each revision in working memory first.
    const long = Array.from({ length: 800 }, (_, i) => `word${i}`).join(' ');
    for (let turn = 0; turn < 8; turn++) await countedTurn(sessionId, long);
    await settle(runtime);
    const digest = await runtime.clients.database
      .container(CONVERSATION_MESSAGES_CONTAINER)
      .item(SESSION_DIGEST_ID, ['user_001', sessionId])
      .read<{ revision?: number }>();
    // Each write counts on from the digest it read, and working memory names the newest.
    expect(digest.resource?.revision).toBe(2);
    const { resource: hot } = await runtime.clients.database
      .container(HOT_CONVERSATIONS_CONTAINER)
      .item(sessionId, sessionId)
      .read<{ digestRevision?: number }>();
    expect(hot?.digestRevision).toBe(2);
    const next = await countedTurn(sessionId, 'And a short one after the fold.');
    const digestReads = Object.entries(byContainerAt.get('content') ?? {}).filter(([name]) =>
      name.startsWith(`${CONVERSATION_MESSAGES_CONTAINER} `),
    );
    expect(digestReads).toEqual([]);
    expect(next.get('content')).toBeLessThanOrEqual(BEFORE_FIRST_CONTENT);
    expect(next.get('message-end')).toBeLessThanOrEqual(TO_MESSAGE_END);
  }, 180_000);

  it('stay within them in a project, with an assistant that keeps its own memory', async () => {
    const created = async (path: string, body: object, key: string) => {
      const response = await fetch(`${runtime.url}/api/${path}`, {
        method: 'POST',
        headers: client.headers({ 'content-type': 'application/json' }),
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as Record<string, string>)[key] ?? '';
    };
    const projectId = await created('projects', { name: 'Counted' }, 'projectId');
    const assistantId = await created('assistants', { name: 'Counted', memory: 'assistant' }, 'assistantId');
    const sessionId = await created('session/start', { projectId, assistantId }, 'sessionId');
    await listener.follow(sessionId);
    // The first turn reads the scoped memory (the user's, the assistant's and the project's) for its prompt.
    const first = await countedTurn(sessionId, 'The first message of the conversation.');
    await countedTurn(sessionId, 'The second one.');
    const third = await countedTurn(sessionId, 'And the third.');
    if (process.env.TURN_REQUESTS === '1')
      console.warn(
        `scoped turns: first ${first.get('content')}/${first.get('message-end')}, ` +
          `third ${third.get('content')}/${third.get('message-end')} (before content / to message-end)`,
      );
    expect(third.get('content')).toBeLessThanOrEqual(BEFORE_FIRST_CONTENT);
    expect(third.get('message-end')).toBeLessThanOrEqual(TO_MESSAGE_END);
  }, 120_000);
});
