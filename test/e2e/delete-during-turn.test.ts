// A deleted conversation stays deleted, end to end with a scripted model: a DELETE while the turn is queued, before
// its first token, mid-stream, during a tool call and while each worker runs leaves nothing in any container and no
// memory, and nothing comes back once the steps and workers finish or its events are delivered again.
import { randomUUID } from 'node:crypto';
import type { InvocationContext } from '@azure/functions';
import type * as df from 'durable-functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { completedMessageId, MESSAGE_COMPLETED_TOPIC } from '../../shared/conversation/message-completed.js';
import { queuedMessageId, USER_MESSAGES_QUEUE } from '../../shared/chat/contracts/queue.js';
import { TURN_ACTIVITIES } from '../../shared/chat/contracts/activities.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { itemsOf, tombstoneOf } from '../support/conversation-items.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { lovesMemoryOutput } from '../support/loves-memory.js';
import { completedExchange } from '../support/message-completed.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
  type ScriptedReply,
} from '../support/scripted-model.js';

/** A point of the turn where a test holds it: a function that waits at its start, or a model call held open. */
class Gate {
  #release!: () => void;
  #reached!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.#release = resolve));
  readonly reached = new Promise<void>((resolve) => (this.#reached = resolve));
  arrive(): Promise<void> {
    this.#reached();
    return this.opened;
  }
  open(): void {
    this.#release();
  }
}

/** Functions of the table held at their start while a gate is set for them (by name). */
const functionGates = new Map<string, Gate>();
/** Model calls held while a gate is set for them: 'answer' (the streamed answer) or a structured output's name. */
const modelGates = new Map<string, { gate: Gate; afterChunks: number }>();

function gated(definition: FunctionDefinition): FunctionDefinition {
  if (definition.kind === 'serviceBus') {
    const { handler } = definition;
    return {
      ...definition,
      handler: async (message: unknown, context: InvocationContext) => {
        await functionGates.get(definition.name)?.arrive();
        await handler(message, context);
      },
    };
  }
  if (definition.kind === 'activity') {
    const handler: df.ActivityHandler = definition.handler;
    return {
      ...definition,
      handler: async (input: unknown, context: InvocationContext) => {
        await functionGates.get(definition.name)?.arrive();
        return handler(input, context) as unknown;
      },
    };
  }
  return definition;
}

const TOOL_QUESTION = 'Please add 2 and 3 with the tool. I love chess.';

function structured(request: ChatCompletionRequest): object {
  return lovesMemoryOutput(request, 'The user talked about what they love.');
}

function reply(request: ChatCompletionRequest): ScriptedReply {
  const name = request.stream === true ? 'answer' : (request.response_format?.json_schema?.name ?? '');
  const held = modelGates.get(name);
  if (held !== undefined) modelGates.delete(name);
  const hold = held ? { hold: { afterChunks: held.afterChunks, until: held.gate.arrive() } } : {};
  if (request.stream !== true) return { content: JSON.stringify(structured(request)), ...hold };
  const last = request.messages.at(-1);
  if (last?.role === 'user' && last.content === TOOL_QUESTION)
    return { toolCalls: [{ name: 'add_numbers', arguments: '{"a":2,"b":3}' }], ...hold };
  if (last?.role === 'tool')
    return { content: `The sum is ${last.content ?? ''}. Noted, you love chess.`, ...hold };
  return {
    content: 'Noted: that is a fine thing to love, and I will keep it in mind for our next talk.',
    ...hold,
  };
}

describe('deleting a conversation at any point of its turn', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    model = await startScriptedModel(reply);
    // A poll longer than any test: a stream open in this process is stopped by the delete itself.
    runtime = await startTestRuntime({
      settings: { ...model.settings, CHAT_CANCEL_POLL_MS: '60000' },
      functions: functionDefinitions.map(gated),
    });
    alice = new ChatClient(runtime.url, 'user_001');
    live = await alice.listen();
  }, 60_000);
  afterAll(async () => {
    for (const gate of functionGates.values()) gate.open();
    for (const { gate } of modelGates.values()) gate.open();
    live?.stop();
    await runtime?.stop();
    await model?.close();
  });

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}/api/${path}`, {
      ...init,
      headers: alice.headers({ 'content-type': 'application/json' }),
    });

  let conversations = 0;
  /** A conversation with one turn answered, persisted and remembered ("I love sailing1.", a fact of its own). */
  async function conversation(): Promise<{ sessionId: string; first: string }> {
    const sessionId = await alice.startSession();
    conversations += 1;
    const first = await alice.send(sessionId, `I love sailing${conversations}.`);
    expect((await live.waitForTerminal(first)).at(-1)).toMatchObject({ type: 'message-end' });
    await settle(runtime);
    expect((await memoryOf(sessionId)).facts).toEqual([`The user loves sailing${conversations}.`]);
    return { sessionId, first };
  }

  async function memoryOf(sessionId: string) {
    const body = await expectStatus<{
      facts: { statement: string; provenance: { sessionId: string }[] }[];
      summaries: { sessionId: string }[];
    }>(await api('memory/users/user_001/memories'), 200);
    return {
      facts: body.facts
        .filter((fact) => fact.provenance.some((source) => source.sessionId === sessionId))
        .map((fact) => fact.statement),
      summaries: body.summaries.filter((summary) => summary.sessionId === sessionId),
    };
  }

  async function remove(sessionId: string): Promise<void> {
    const response = await api(`history/conversations/${sessionId}`, { method: 'DELETE' });
    expect(response.status).toBe(204);
  }

  /** Nothing of the conversation anywhere a client or a container can show it. */
  async function expectGone(sessionId: string, turns: readonly string[]): Promise<void> {
    expect((await api(`history/conversations/${sessionId}`)).status).toBe(404);
    expect((await api(`history/conversations/${sessionId}/export?format=json`)).status).toBe(404);
    const list = await expectStatus<{ conversations: { sessionId: string }[] }>(
      await api('history/users/user_001/conversations?limit=100'),
      200,
    );
    expect(list.conversations.map((c) => c.sessionId)).not.toContain(sessionId);
    expect(await itemsOf(runtime, sessionId)).toEqual([]);
    expect(await tombstoneOf(runtime, sessionId)).toMatchObject({ deletedAt: expect.any(String) });
    expect(await memoryOf(sessionId)).toEqual({ facts: [], summaries: [] });
    for (const id of turns)
      expect(await runtime.durable.getStatus(`chat-${sessionId}-${id}`)).toBeUndefined();
    expect((await alice.post({ sessionId, chatMessageId: randomUUID(), text: 'still there?' })).status).toBe(
      404,
    );
  }

  /** Delivers the turn's queued message and its `message-completed` again, as the broker would after a lost lock. */
  async function redeliver(sessionId: string, chatMessageId: string, text: string): Promise<void> {
    const at = new Date().toISOString();
    await runtime.serviceBus.publish(USER_MESSAGES_QUEUE, {
      messageId: `${queuedMessageId(sessionId, chatMessageId)}.again`,
      sessionId,
      body: { userId: 'user_001', sessionId, chatMessageId, text, postedAt: at },
    });
    const completed = completedExchange({
      userId: 'user_001',
      sessionId,
      chatMessageId,
      ordinal: 2,
      question: text,
      at,
      answer: { content: 'Noted.' },
    });
    await runtime.serviceBus.publish(MESSAGE_COMPLETED_TOPIC, {
      messageId: `${completedMessageId(sessionId, chatMessageId)}.again`,
      sessionId,
      body: completed,
    });
    await settle(runtime);
  }

  /**
   * Runs a second turn held where `arm` says (armed once the first turn is done), deletes the conversation there, lets
   * the turn go on, and checks that nothing of it is left, then again after its messages are delivered again.
   */
  async function deleteAt(
    arm: () => Gate,
    text: string,
    whileHeld: (gate: Gate, id: string) => Promise<void> = (gate) => gate.reached,
  ) {
    const { sessionId, first } = await conversation();
    const gate = arm();
    try {
      const id = await alice.send(sessionId, text);
      await whileHeld(gate, id);
      await remove(sessionId);
      gate.open();
      await settle(runtime);
      await expectGone(sessionId, [first, id]);
      await redeliver(sessionId, id, text);
      await expectGone(sessionId, [first, id]);
      return { sessionId, id };
    } finally {
      gate.open();
      functionGates.clear();
      modelGates.clear();
    }
  }

  const holdFunction = (name: string) => () => {
    const gate = new Gate();
    functionGates.set(name, gate);
    return gate;
  };
  const holdModel =
    (call: string, afterChunks = 0) =>
    () => {
      const gate = new Gate();
      modelGates.set(call, { gate, afterChunks });
      return gate;
    };

  it('while the message waits in the queue', async () => {
    await deleteAt(holdFunction('chatWorker'), 'I love chess.');
  }, 60_000);

  it('before the first token', async () => {
    await deleteAt(holdModel('answer'), 'I love chess.');
  }, 60_000);

  it('mid-stream: the stream stops at once and nothing streamed is kept', async () => {
    const stoppedBefore = runtime.app.chat.cancellations.stats().stoppedHere;
    const { id } = await deleteAt(holdModel('answer', 6), 'I love chess.', async (gate, turn) => {
      await gate.reached;
      await waitUntil(() => live.events(turn).some((event) => event.type === 'content'));
    });
    // The client saw part of the answer; the delete aborted the model's stream in this process.
    expect(live.events(id).some((event) => event.type === 'content')).toBe(true);
    expect(runtime.app.chat.cancellations.stats().stoppedHere).toBe(stoppedBefore + 1);
  }, 60_000);

  it('during a tool call: the tool is not run, and the next round never starts', async () => {
    const before = model.requests.length;
    await deleteAt(holdFunction(TURN_ACTIVITIES.runTool), TOOL_QUESTION);
    // The first turn's answer and the round that asked for the tool, none after it (structured calls aside).
    expect(model.requests.slice(before).filter((request) => request.stream === true)).toHaveLength(2);
  }, 60_000);

  it('while the history worker runs', async () => {
    await deleteAt(holdModel('exchange_index'), 'I love chess.');
  }, 60_000);

  it('while the memory worker runs: no summary and no fact of it', async () => {
    await deleteAt(holdModel('conversation_summary'), 'I love chess.');
    const all = await expectStatus<{ facts: { statement: string }[] }>(
      await api('memory/users/user_001/memories'),
      200,
    );
    expect(all.facts.map((fact) => fact.statement)).not.toContain('The user loves chess.');
  }, 60_000);
});

async function waitUntil(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
