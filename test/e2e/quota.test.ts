// Per-user quotas end to end over the local runtime, driven as a client drives it (a paced offline model, so turns
// overlap): each limit refuses with 429 problem+json and retry-after and changes nothing; slots free when turns end;
// a limit holds across two instances of the app; exempt users and groups pass.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { postChatEndpoint } from '../../functions/chat.js';
import type { LocalRuntime } from '../../local/runtime.js';
import type { App } from '../../shared/app/app.js';
import type { QuotaConfig } from '../../shared/quota/settings.js';
import type { UsageReader } from '../../shared/quota/usage-reader.js';
import { asUser, callEndpoint } from '../support/call-endpoint.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import {
  QUOTAS_CONTAINER,
  TURN_LEASES_ID,
  turnLeasesDocumentSchema,
  type TurnLease,
} from '../../shared/quota/contracts.js';
import { secondInstance } from '../../local/second-instance.js';

/** Turns slow enough (a first token after 3 s) that ten posts all arrive while the first ones still run. */
const PACE = { OFFLINE_MODEL_TTFT_MS: '3000', OFFLINE_MODEL_TOKENS_PER_SECOND: '200' };
const TURN_TIMEOUT_MS = 30_000;

interface QuotaProblem {
  status: number;
  code: string;
  detail: string;
  limit: string;
  allowed: number;
  current: number;
  retryAfterSeconds: number;
}

let runtime: LocalRuntime;
let base: QuotaConfig;
const clients: ChatClient[] = [];
const listeners: RealtimeListener[] = [];

beforeAll(async () => {
  runtime = await startTestRuntime({
    settings: { ...PACE, QUOTA_CONCURRENT_TURNS: '3', QUOTA_EXEMPT: 'user_003, group:quota-free' },
  });
  base = runtime.app.quota.config;
}, 60_000);

afterAll(async () => {
  for (const listener of listeners) listener.stop();
  await runtime?.stop();
});

/** The limits of one scenario, as an operator would set them (only the ones it names). */
function useLimits(limits: Partial<QuotaConfig>) {
  runtime.app.quota.config = { ...base, concurrentTurns: 0, ...limits };
}

async function client(userId: string): Promise<{ chat: ChatClient; live: RealtimeListener }> {
  const chat = new ChatClient(runtime.url, userId);
  const live = await chat.listen();
  clients.push(chat);
  listeners.push(live);
  return { chat, live };
}

function post(
  chat: ChatClient,
  sessionId: string,
  chatMessageId = randomUUID(),
  text = 'reply with 20 words',
) {
  return chat
    .post({ sessionId, chatMessageId, text })
    .then((response) => ({ response, chatMessageId, sessionId }));
}

async function quotaProblem(response: Response, limit: string): Promise<QuotaProblem> {
  expect(response.status).toBe(429);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const problem = (await response.json()) as QuotaProblem;
  expect(problem).toMatchObject({ status: 429, code: 'quota_exceeded', limit });
  expect(Number(response.headers.get('retry-after'))).toBe(problem.retryAfterSeconds);
  expect(problem.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  return problem;
}

/** Nothing of a refused message was kept: no posted record, no event, and so nothing queued that could start. */
async function expectNothingOf(userId: string, sessionId: string, chatMessageId: string) {
  expect(await runtime.app.chat.posted.find(userId, sessionId, chatMessageId)).toBeUndefined();
  expect(await runtime.app.streaming.turnEvents.read(sessionId, chatMessageId, 0)).toEqual([]);
}

async function sessions(chat: ChatClient, count: number): Promise<string[]> {
  return Promise.all(Array.from({ length: count }, () => chat.startSession()));
}

/** The user's leases as their document holds them, read behind the app. */
async function leasesOf(userId: string): Promise<TurnLease[]> {
  const container = runtime.clients.database.container(QUOTAS_CONTAINER);
  const { resource } = await container.item(TURN_LEASES_ID, userId).read();
  return resource === undefined ? [] : turnLeasesDocumentSchema.parse(resource).leases;
}

/** The turns whose slot the user's lease document still holds. */
async function heldSlots(userId: string): Promise<string[]> {
  return (await leasesOf(userId))
    .filter((lease) => lease.slot !== false && lease.settling !== true)
    .map((lease) => lease.turn);
}

/** Waits for the turns to end as their client sees it: by then their slots are free (a turn frees it before its end). */
async function ended(
  live: RealtimeListener,
  userId: string,
  turns: readonly { sessionId: string; chatMessageId: string }[],
) {
  await Promise.all(turns.map(({ chatMessageId }) => live.waitForTerminal(chatMessageId, TURN_TIMEOUT_MS)));
  const held = await heldSlots(userId);
  expect(
    turns.filter(({ sessionId, chatMessageId }) => held.includes(`${sessionId}/${chatMessageId}`)),
  ).toEqual([]);
}

describe('QUOTA_CONCURRENT_TURNS=3', () => {
  beforeEach(() => useLimits({ concurrentTurns: 3 }));

  it('ten parallel posts in ten sessions: exactly three accepted, seven 429 that keep nothing; once those end, new ones are accepted', async () => {
    const { chat, live } = await client('user_001');
    const ids = await sessions(chat, 10);
    const posts = await Promise.all(ids.map((sessionId) => post(chat, sessionId)));
    const accepted = posts.filter(({ response }) => response.status === 202);
    const refused = posts.filter(({ response }) => response.status !== 202);
    expect(accepted).toHaveLength(3);
    expect(refused).toHaveLength(7);
    for (const { response, sessionId, chatMessageId } of refused) {
      const problem = await quotaProblem(response, 'concurrent-turns');
      expect(problem).toMatchObject({ allowed: 3, current: 3 });
      expect(problem.detail).toContain('QUOTA_CONCURRENT_TURNS');
      await expectNothingOf('user_001', sessionId, chatMessageId);
    }

    expect(await heldSlots('user_001')).toHaveLength(3);
    // A client sending its next message as soon as it sees the end is not refused for the slot that turn held.
    await ended(live, 'user_001', accepted);
    expect(await heldSlots('user_001')).toEqual([]);
    const again = await Promise.all(refused.map(({ sessionId }) => post(chat, sessionId)));
    expect(again.map(({ response }) => response.status).sort()).toEqual([202, 202, 202, 429, 429, 429, 429]);
  }, 90_000);

  it('holds across two instances of the app sharing the same Cosmos DB', async () => {
    // A second composition over the same local services, as a second Functions instance is.
    const other: App = secondInstance(runtime);
    try {
      // Carol, exempt by the runtime's settings, is not here; Alice still has turns running.
      useLimits({ concurrentTurns: 3, exempt: { users: [], groups: [] } });
      other.quota.config = runtime.app.quota.config;
      const { chat, live } = await client('user_003');
      const ids = await sessions(chat, 10);
      const statuses = await Promise.all(
        ids.map(async (sessionId, n) => {
          const chatMessageId = randomUUID();
          const json = { sessionId, chatMessageId, text: 'reply with 20 words' };
          const status =
            n % 2 === 0
              ? (await post(chat, sessionId, chatMessageId)).response.status
              : (await callEndpoint(postChatEndpoint, other, { headers: asUser('user_003'), json })).status;
          return { status, sessionId, chatMessageId };
        }),
      );
      const accepted = statuses.filter(({ status }) => status === 202);
      expect(accepted).toHaveLength(3);
      expect(statuses.filter(({ status }) => status === 429)).toHaveLength(7);
      expect(await heldSlots('user_003')).toHaveLength(3);
      await ended(live, 'user_003', accepted);
    } finally {
      await other.close();
    }
  }, 90_000);
});

describe('QUOTA_MESSAGES_PER_MINUTE=3', () => {
  beforeEach(async () => {
    useLimits({ messagesPerMinute: 3 });
    // The window is the UTC clock minute: start well inside one, so the ten posts share it.
    const second = new Date().getUTCSeconds();
    if (second > 50) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
  }, 30_000);

  it('ten parallel posts in ten sessions: exactly three accepted; a re-post of one still is, a regenerate is not', async () => {
    const { chat, live } = await client('user_002');
    const ids = await sessions(chat, 10);
    const posts = await Promise.all(ids.map((sessionId) => post(chat, sessionId)));
    const accepted = posts.filter(({ response }) => response.status === 202);
    expect(accepted).toHaveLength(3);
    for (const { response, sessionId, chatMessageId } of posts.filter(
      ({ response }) => response.status !== 202,
    )) {
      const problem = await quotaProblem(response, 'messages-per-minute');
      expect(problem).toMatchObject({ allowed: 3, current: 3 });
      expect(problem.retryAfterSeconds).toBeLessThanOrEqual(60);
      await expectNothingOf('user_002', sessionId, chatMessageId);
    }

    // The same message again is the same turn: never refused, never counted.
    const first = accepted[0]!;
    expect((await post(chat, first.sessionId, first.chatMessageId)).response.status).toBe(202);
    await live.waitForTerminal(first.chatMessageId, TURN_TIMEOUT_MS);
    const regenerate = await fetch(
      `${runtime.url}/api/chat/${first.sessionId}/${first.chatMessageId}/regenerate`,
      {
        method: 'POST',
        headers: chat.headers({ 'content-type': 'application/json' }),
        body: JSON.stringify({ chatMessageId: randomUUID() }),
      },
    );
    await quotaProblem(regenerate, 'messages-per-minute');
  }, 90_000);
});

describe('QUOTA_TOKENS_PER_DAY', () => {
  it("refuses new turns once the day's tokens reach the limit, until midnight UTC", async () => {
    useLimits({ tokensPerDay: 1_000 });
    const used = { tokens: 999 };
    const usage: UsageReader = {
      tokensOnDay: (userId) => Promise.resolve(userId === 'user_002' ? used.tokens : 0),
      costInMonth: () => Promise.resolve(0),
    };
    const real = runtime.app.quota.usage;
    runtime.app.quota.usage = usage;
    try {
      const { chat } = await client('user_002');
      const [sessionId] = await sessions(chat, 1);
      const first = await post(chat, sessionId!);
      expect(first.response.status).toBe(202);
      used.tokens = 1_000;
      const refused = await post(chat, sessionId!);
      const problem = await quotaProblem(refused.response, 'tokens-per-day');
      expect(problem).toMatchObject({ allowed: 1_000, current: 1_000 });
      const now = new Date();
      const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
      expect(problem.retryAfterSeconds).toBeLessThanOrEqual(Math.ceil((midnight - now.getTime()) / 1000) + 1);
      expect(problem.retryAfterSeconds).toBeGreaterThan(Math.floor((midnight - now.getTime()) / 1000) - 60);
      await expectNothingOf('user_002', sessionId!, refused.chatMessageId);
    } finally {
      runtime.app.quota.usage = real;
    }
  }, 60_000);
});

describe('reservations under a burst', () => {
  it('ten parallel long answers under QUOTA_TOKENS_PER_DAY: only what the estimates fit is admitted', async () => {
    const userId = 'user_001';
    // The day counts from here: what Alice's earlier turns used (once their background work is recorded) is set aside.
    const real = runtime.app.quota.usage;
    const today = () => real.tokensOnDay(userId, new Date());
    let before = await today();
    for (let quiet = false, wait = 0; !quiet && wait < 30; wait += 1) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const now = await today();
      quiet = now === before;
      before = now;
    }
    runtime.app.quota.usage = {
      tokensOnDay: async (who, at) => (await real.tokensOnDay(who, at)) - (who === userId ? before : 0),
      costInMonth: (who, at) => real.costInMonth(who, at),
    };
    try {
      await burst(userId);
    } finally {
      runtime.app.quota.usage = real;
    }
  }, 120_000);

  async function burst(userId: string) {
    useLimits({ tokensPerDay: 2_000, turnTokenEstimate: 1_000 });
    const { chat, live } = await client(userId);
    const ids = await sessions(chat, 10);
    const posts = await Promise.all(
      ids.map((sessionId) => post(chat, sessionId, randomUUID(), 'reply with 1000 words')),
    );
    const accepted = posts.filter(({ response }) => response.status === 202);
    const refused = posts.filter(({ response }) => response.status !== 202);
    // Two estimates of 1,000 tokens fill the day's 2,000: the other eight are refused and keep nothing.
    expect(accepted).toHaveLength(2);
    for (const { response, sessionId, chatMessageId } of refused) {
      const problem = await quotaProblem(response, 'tokens-per-day');
      expect(problem).toMatchObject({ allowed: 2_000, current: 2_000 });
      expect(problem.detail).toContain('QUOTA_TOKENS_PER_DAY');
      await expectNothingOf(userId, sessionId, chatMessageId);
    }
    expect((await leasesOf(userId)).map((lease) => lease.tokens)).toEqual([1_000, 1_000]);

    // Their usage recorded, the reservations are gone: at least what the two turns reported was spent (their
    // background work adds to it).
    const ends = await Promise.all(
      accepted.map(({ chatMessageId }) => live.waitForTerminal(chatMessageId, TURN_TIMEOUT_MS)),
    );
    const reported = ends
      .map((events) => events.find((event) => event.type === 'message-end'))
      .reduce((sum, end) => sum + (end?.type === 'message-end' ? (end.usage?.totalTokens ?? 0) : 0), 0);
    await expect.poll(() => leasesOf(userId), { timeout: 20_000 }).toEqual([]);
    const spent = await runtime.app.quota.usage.tokensOnDay(userId, new Date());
    expect(spent).toBeGreaterThanOrEqual(reported);
    // Over the limit now (each answer overran its estimate): the next message is refused until midnight.
    expect(spent).toBeGreaterThan(2_000);
    const [next] = await sessions(chat, 1);
    const problem = await quotaProblem((await post(chat, next!)).response, 'tokens-per-day');
    expect(problem.retryAfterSeconds).toBeGreaterThan(2);

    // The turns' background work (index line and title, summary and its embedding, profile changes) ends without
    // calling the model: the limit, reserved at admission, was reached before any of it began, so the day's tokens
    // are the two answers' alone. Each conversation keeps the title its first message gave it.
    await backgroundDone(userId, accepted);
    const background = await backgroundTokens(userId, accepted);
    expect(background).toEqual({ history: 0, memory: 0 });
    expect(await runtime.app.quota.usage.tokensOnDay(userId, new Date())).toBe(spent);
    for (const { sessionId } of accepted) {
      const header = await runtime.app.history.headers.get(userId, sessionId);
      expect(header).toMatchObject({ title: 'reply with 1000 words', titleSource: 'first-message' });
    }
  }
});

/** Waits until the history and memory workers have each finished with every one of these turns. */
async function backgroundDone(
  userId: string,
  turns: readonly { sessionId: string; chatMessageId: string }[],
): Promise<void> {
  const { history, memory } = runtime.app;
  await expect
    .poll(
      async () => {
        const done = await Promise.all(
          turns.map(async ({ sessionId, chatMessageId }) => {
            const [header, consolidation] = await Promise.all([
              history.headers.get(userId, sessionId),
              memory.facts.consolidationStart(userId, sessionId, chatMessageId),
            ]);
            return (header?.persistedCount ?? 0) > 0 && consolidation.record !== undefined;
          }),
        );
        return done.every(Boolean);
      },
      { timeout: 30_000, interval: 250 },
    )
    .toBe(true);
}

/** The tokens recorded today for these turns' background jobs, by worker. */
async function backgroundTokens(
  userId: string,
  turns: readonly { chatMessageId: string }[],
): Promise<{ history: number; memory: number }> {
  const day = new Date().toISOString().slice(0, 10);
  const ids = new Set(turns.map(({ chatMessageId }) => chatMessageId));
  const records = await runtime.app.usage.ledger.records(userId, day, day);
  const tokens = { history: 0, memory: 0 };
  for (const record of records) {
    if (record.type !== 'usage' || record.turnId === undefined || !ids.has(record.turnId)) continue;
    for (const job of ['history', 'memory'] as const)
      for (const part of record.jobs[job] ?? []) tokens[job] += part.inputTokens + part.outputTokens;
  }
  return tokens;
}

describe('uploads and the spend limits', () => {
  const uploadAs = (userId: string, text: string) =>
    fetch(`${runtime.url}/api/knowledge/documents`, {
      method: 'POST',
      headers: { 'x-ms-client-principal-id': userId, 'content-type': 'application/json' },
      body: JSON.stringify({
        fileName: 'notes.md',
        contentType: 'text/markdown',
        contentBase64: Buffer.from(text).toString('base64'),
      }),
    });
  const stored = async (userId: string) =>
    (
      await expectStatus<{ documents: { bytes: number }[] }>(
        await fetch(`${runtime.url}/api/knowledge/documents`, {
          headers: { 'x-ms-client-principal-id': userId },
        }),
        200,
      )
    ).documents.map((document) => document.bytes);

  // Alice keeps no documents in the other scenarios.
  const userId = 'user_001';

  it("an upload with the day's tokens spent is 429 and stores nothing", async () => {
    useLimits({ tokensPerDay: 1_000 });
    const real = runtime.app.quota.usage;
    runtime.app.quota.usage = {
      tokensOnDay: (who) => Promise.resolve(who === userId ? 1_000 : 0),
      costInMonth: () => Promise.resolve(0),
    };
    try {
      const problem = await quotaProblem(await uploadAs(userId, '# Spent\n\nsome text'), 'tokens-per-day');
      expect(problem).toMatchObject({ allowed: 1_000, current: 1_000 });
      expect(await stored(userId)).toEqual([]);
    } finally {
      runtime.app.quota.usage = real;
    }
  }, 60_000);

  it('ten parallel 50,000-byte uploads under 200,000 bytes store at most the limit', async () => {
    useLimits({ knowledgeBytes: 200_000 });
    const texts = Array.from({ length: 10 }, (_, n) => {
      const head = `# Document ${n}\n\n`;
      return head + 'x'.repeat(50_000 - head.length);
    });
    const responses = await Promise.all(texts.map((text) => uploadAs(userId, text)));
    const statuses = responses.map((response) => response.status);
    // Four fit: a document stored while its upload still holds its lease is counted once.
    const accepted = statuses.filter((status) => status === 202).length;
    expect(accepted).toBe(4);
    for (const response of responses.filter(({ status }) => status !== 202))
      await quotaProblem(response, 'knowledge-bytes');
    const bytes = await stored(userId);
    expect(bytes).toHaveLength(accepted);
    expect(bytes.reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(200_000);
    // Stored, the documents count their bytes: the uploads hold none of them any more.
    expect((await leasesOf(userId)).some((lease) => (lease.bytes ?? 0) > 0)).toBe(false);
  }, 60_000);
});

describe('QUOTA_KNOWLEDGE_BYTES', () => {
  const upload = (text: string) =>
    fetch(`${runtime.url}/api/knowledge/documents`, {
      method: 'POST',
      headers: { 'x-ms-client-principal-id': 'user_002', 'content-type': 'application/json' },
      body: JSON.stringify({
        fileName: 'notes.md',
        contentType: 'text/markdown',
        contentBase64: Buffer.from(text).toString('base64'),
      }),
    });
  const listed = async () =>
    (
      await expectStatus<{ documents: { documentId: string }[] }>(
        await fetch(`${runtime.url}/api/knowledge/documents`, {
          headers: { 'x-ms-client-principal-id': 'user_002' },
        }),
        200,
      )
    ).documents.map((document) => document.documentId);

  it('refuses an upload past the bytes a user may keep, stores nothing of it, and takes it once room is made', async () => {
    useLimits({ knowledgeBytes: 2_000 });
    const one = `# One\n\n${'first document text. '.repeat(60)}`;
    const two = `# Two\n\n${'second document text. '.repeat(60)}`;
    const kept = (await expectStatus<{ document: { documentId: string } }>(await upload(one), 202)).document;

    const problem = await quotaProblem(await upload(two), 'knowledge-bytes');
    expect(problem).toMatchObject({ allowed: 2_000, current: Buffer.byteLength(one) });
    expect(await listed()).toEqual([kept.documentId]);
    // The same content again adds nothing: never refused.
    expect([200, 202]).toContain((await upload(one)).status);

    const deleted = await fetch(`${runtime.url}/api/knowledge/documents/${kept.documentId}`, {
      method: 'DELETE',
      headers: { 'x-ms-client-principal-id': 'user_002' },
    });
    expect(deleted.status).toBe(204);
    expect((await upload(two)).status).toBe(202);
  }, 60_000);
});

describe('QUOTA_EXEMPT', () => {
  it('names users and groups no limit applies to', async () => {
    useLimits({ concurrentTurns: 1, messagesPerMinute: 1 });
    const { chat: carol } = await client('user_003');
    const ids = await sessions(carol, 3);
    const posts = await Promise.all(ids.map((sessionId) => post(carol, sessionId)));
    expect(posts.map(({ response }) => response.status)).toEqual([202, 202, 202]);

    // Bob is limited, unless his identity names the exempt group (an App Service principal's groups claim).
    const principal = (groups: string[]) =>
      Buffer.from(
        JSON.stringify({ auth_typ: 'aad', claims: groups.map((group) => ({ typ: 'groups', val: group })) }),
      ).toString('base64');
    const bob = new ChatClient(runtime.url, 'user_002');
    const bobSessions = await sessions(bob, 2);
    const asBob = (sessionId: string, groups: string[]) =>
      fetch(`${runtime.url}/api/chat`, {
        method: 'POST',
        headers: bob.headers({
          'content-type': 'application/json',
          'x-ms-client-principal': principal(groups),
        }),
        body: JSON.stringify({ sessionId, chatMessageId: randomUUID(), text: 'hello' }),
      });
    expect((await asBob(bobSessions[0]!, ['quota-free'])).status).toBe(202);
    expect((await asBob(bobSessions[1]!, ['quota-free'])).status).toBe(202);
    // Without it, his messages count: within the minute's one, whatever he sent before, the next is refused. The
    // limit counts per calendar minute: near a minute's end, wait for the next so both land in the same one.
    const intoMinuteMs = Date.now() % 60_000;
    if (intoMinuteMs > 40_000)
      await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinuteMs + 100));
    const [counted, refused] = [
      await asBob(bobSessions[1]!, ['readers']),
      await asBob(bobSessions[1]!, ['readers']),
    ];
    expect([202, 429]).toContain(counted.status);
    await quotaProblem(refused, 'messages-per-minute');
  }, 90_000);
});
