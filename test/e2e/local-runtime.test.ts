// The local runtime as a client and the app's own adapters see it: health, HTTP errors, the function
// table's triggers, orchestrations and activities wired together, and data that survives a restart.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InvocationContext } from '@azure/functions';
import { WebPubSubClient } from '@azure/web-pubsub-client';
import type * as df from 'durable-functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { getApp } from '../../shared/app/app.js';
import { SESSIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import { USER_MESSAGES_QUEUE } from '../../shared/chat/contracts/queue.js';
import { MAX_DELIVERY_COUNT } from '../../shared/messaging/service-bus-entities.js';
import { startTestRuntime } from '../support/local-runtime.js';

// A small pipeline written exactly like production definitions: a queue trigger starts an orchestration
// that fans out to activities and stores its result in Cosmos DB.
const received: { body: unknown; metadata: unknown }[] = [];
// The activity for the word "slow" waits until the test lets it finish.
let slowStarted: () => void = () => undefined;
const slowRunning = new Promise<void>((resolve) => (slowStarted = resolve));
let releaseSlow: () => void = () => undefined;
const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));
const probeFunctions: FunctionDefinition[] = [
  {
    kind: 'serviceBus',
    name: 'probeWorker',
    source: { queueName: USER_MESSAGES_QUEUE },
    isSessionsEnabled: true,
    usesDurableClient: true,
    handler: async (message: unknown, context: InvocationContext) => {
      received.push({ body: message, metadata: context.triggerMetadata });
      const body = message as { id: string; words: string[]; poison?: boolean };
      if (body.poison) throw new Error(`cannot handle ${body.id}`);
      const app = await getApp();
      await app.orchestrations(context).startNew('probeOrchestration', {
        instanceId: `probe-${body.id}`,
        input: body,
      });
    },
  },
  {
    kind: 'orchestration',
    name: 'probeOrchestration',
    handler: function* (context: df.OrchestrationContext) {
      const input = context.df.getInput<{ id: string; words: string[] }>();
      const upper = (yield context.df.Task.all(
        input.words.map((word) => context.df.callActivity('probeUpper', word)),
      )) as string[];
      yield context.df.callActivity('probeStore', { id: input.id, text: upper.join(' ') });
      return upper.join(' ');
    },
  },
  {
    kind: 'activity',
    name: 'probeUpper',
    handler: async (word: unknown) => {
      if (word === 'slow') {
        slowStarted();
        await slowGate;
      }
      return String(word).toUpperCase();
    },
  },
  {
    kind: 'activity',
    name: 'probeStore',
    handler: async (input: unknown) => {
      // Activities may run while a runtime starts (resumed orchestrations): wait until the test holds it.
      const { database } = (await started.promise).clients;
      const { id, text } = input as { id: string; text: string };
      await database.container(SESSIONS_CONTAINER).items.upsert({ id, userId: 'probe', text });
    },
  },
];

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** The runtime the test is working with, once it has started. */
let started = deferred<LocalRuntime>();

// The probe worker takes the place of the chat worker on the user-messages queue (one receiver per queue).
const withProbes = [...functionDefinitions.filter((d) => d.name !== 'chatWorker'), ...probeFunctions];

describe('local runtime', () => {
  let dataDir: string;
  let runtime: LocalRuntime;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'chat-runtime-'));
    runtime = await startTestRuntime({ dataDir, functions: withProbes });
    started.resolve(runtime);
  });
  afterAll(async () => {
    await runtime?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('reports every dependency up on GET /api/health', async () => {
    const response = await fetch(`${runtime.url}/api/health`);
    expect(response.status).toBe(200);
    const report = (await response.json()) as {
      status: string;
      environment: string;
      dependencies: Record<string, { status: string; detail: string }>;
    };
    expect(report.status).toBe('ok');
    expect(report.environment).toBe('local');
    expect(Object.keys(report.dependencies).sort()).toEqual([
      'cosmos',
      'durable',
      'llm',
      'localLatency',
      'serviceBus',
      'webPubSub',
    ]);
    for (const dependency of Object.values(report.dependencies)) expect(dependency.status).toBe('up');
    expect(report.dependencies.llm?.detail).toMatch(/offline stand-in/);
    // Every figure measured here depends on whether the services answer as late as Azure's: health says which.
    expect(report.dependencies.localLatency?.detail).toMatch(/off|none|no /i);
  });

  it('answers unknown routes and wrong methods with problem details', async () => {
    const missing = await fetch(`${runtime.url}/api/nope`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
    expect(await missing.json()).toMatchObject({ status: 404, code: 'not_found' });

    const wrongMethod = await fetch(`${runtime.url}/api/health`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
  });

  it('runs a queue trigger, an orchestration with fan-out and activities from the table', async () => {
    await runtime.serviceBus.publish(USER_MESSAGES_QUEUE, {
      messageId: 'm-1',
      sessionId: 's-1',
      body: { id: 'm-1', words: ['fan', 'out', 'works'] },
    });
    const status = await waitFor(async () => {
      const current = await runtime.durable.getStatus('probe-m-1');
      return current?.runtimeStatus === 'Completed' ? current : undefined;
    });
    expect(status.output).toBe('FAN OUT WORKS');
    expect(received[0]?.body).toEqual({ id: 'm-1', words: ['fan', 'out', 'works'] });
    expect(received[0]?.metadata).toMatchObject({ messageId: 'm-1', sessionId: 's-1', deliveryCount: 1 });
    const { resource } = await runtime.clients.database
      .container(SESSIONS_CONTAINER)
      .item('m-1', 'probe')
      .read<{ text: string }>();
    expect(resource?.text).toBe('FAN OUT WORKS');
  });

  it('dead-letters a message whose handler keeps failing, with the reason shown at /local/dead-letters', async () => {
    await runtime.serviceBus.publish(USER_MESSAGES_QUEUE, {
      messageId: 'poison-1',
      sessionId: 's-2',
      body: { id: 'poison-1', words: [], poison: true },
    });
    await runtime.serviceBus.idle();
    expect(received.filter((r) => (r.body as { id: string }).id === 'poison-1')).toHaveLength(
      MAX_DELIVERY_COUNT,
    );

    const response = await fetch(`${runtime.url}/local/dead-letters`);
    const { entities } = (await response.json()) as {
      entities: { entity: string; deadLetters: Record<string, unknown>[] }[];
    };
    const queue = entities.find((e) => e.entity === USER_MESSAGES_QUEUE);
    expect(queue?.deadLetters).toEqual([
      expect.objectContaining({
        messageId: 'poison-1',
        sessionId: 's-2',
        deliveryCount: MAX_DELIVERY_COUNT,
        deadLetterReason: 'MaxDeliveryCountExceeded',
        deadLetterErrorDescription: 'cannot handle poison-1',
      }),
    ]);
    const health = (await (await fetch(`${runtime.url}/api/health`)).json()) as {
      dependencies: { serviceBus: { detail: string } };
    };
    expect(health.dependencies.serviceBus.detail).toMatch(/1 dead-lettered/);
  });

  it('lets the Web PubSub server SDK reach a client holding a token it issued', async () => {
    const token = await runtime.clients.webPubSub.getClientAccessToken({ userId: 'user_001' });
    const client = new WebPubSubClient(token.url);
    const messages: unknown[] = [];
    client.on('server-message', (event) => messages.push(event.message.data));
    await client.start();
    try {
      await runtime.clients.webPubSub.sendToUser('user_001', { hello: 'world' });
      await waitFor(() => Promise.resolve(messages.length > 0 || undefined));
      expect(messages).toEqual([{ hello: 'world' }]);
    } finally {
      client.stop();
    }
  });

  it('streams a chat completion from the configured model through the app’s LLM gateway', async () => {
    const deltas: string[] = [];
    const result = await runtime.app.chat.turn.llm.streamChat(
      { messages: [{ role: 'user', content: 'reply with 5 words' }] },
      (delta) => {
        if (delta.type === 'content') deltas.push(delta.text);
      },
    );
    expect(result.content.split(' ')).toHaveLength(5);
    expect(deltas.join('')).toBe(result.content);
  });

  it('finishes an orchestration that was running when the runtime restarted', async () => {
    await runtime.serviceBus.publish(USER_MESSAGES_QUEUE, {
      messageId: 'm-restart',
      sessionId: 's-3',
      body: { id: 'm-restart', words: ['before', 'slow'] },
    });
    await slowRunning;
    const stopping = runtime.stop();
    releaseSlow();
    await stopping;

    started = deferred<LocalRuntime>();
    runtime = await startTestRuntime({ dataDir, functions: withProbes });
    started.resolve(runtime);
    const status = await waitFor(async () => {
      const current = await runtime.durable.getStatus('probe-m-restart');
      return current?.runtimeStatus === 'Completed' ? current : undefined;
    });
    expect(status.output).toBe('BEFORE SLOW');
    const { resource } = await runtime.clients.database
      .container(SESSIONS_CONTAINER)
      .item('m-restart', 'probe')
      .read<{ text: string }>();
    expect(resource?.text).toBe('BEFORE SLOW');
    // The message was handled once: the restart resumed the orchestration, it did not redeliver the message.
    expect(received.filter((r) => (r.body as { id: string }).id === 'm-restart')).toHaveLength(1);
  });

  it('keeps Cosmos DB data across a restart', async () => {
    const container = runtime.clients.database.container(SESSIONS_CONTAINER);
    await container.items.create({ id: 'kept', userId: 'user_002', note: 'survives' });
    await runtime.stop();
    started = deferred<LocalRuntime>();
    runtime = await startTestRuntime({ dataDir, functions: withProbes });
    started.resolve(runtime);
    const { resource } = await runtime.clients.database
      .container(SESSIONS_CONTAINER)
      .item('kept', 'user_002')
      .read<{ note: string }>();
    expect(resource?.note).toBe('survives');
  });
});

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
