// Quotas at the chat front door and the chat worker, in process with real HttpRequest objects and in-memory stores:
// a refusal is a 429 problem with retry-after that records, tickets and queues nothing and holds no slot; a re-post
// of an accepted message is never refused; the worker frees the slot once the turn has ended.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { runQueuedTurn } from '../shared/chat/turn/run-queued-turn.js';
import type { QueuedChatMessage } from '../shared/chat/contracts/queue.js';
import { ConflictError } from '../shared/errors.js';
import { releaseTurn } from '../shared/quota/quota-gate.js';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { MemoryQuotaState } from '../test/support/in-memory-quota.js';
import { postChatEndpoint } from './chat.js';

let app: TestApp;
let state: MemoryQuotaState;
let sessions: string[];

function appWith(settings: Record<string, string>) {
  app = createTestApp({ settings });
  state = new MemoryQuotaState();
  app.quota.state = state;
}

async function startSessions(count: number) {
  sessions = [];
  for (let n = 0; n < count; n += 1) sessions.push((await app.fakes.sessions.create('user_001')).sessionId);
}

const post = (sessionId: string, chatMessageId: string, text = 'hello', user = 'user_001') =>
  callEndpoint(postChatEndpoint, app, { headers: asUser(user), json: { sessionId, chatMessageId, text } });

interface QuotaProblem {
  status: number;
  code: string;
  detail: string;
  limit: string;
  allowed: number;
  current: number;
  retryAfterSeconds: number;
}

async function expectQuotaProblem(
  reply: Awaited<ReturnType<typeof post>>,
  limit: string,
): Promise<QuotaProblem> {
  expect(reply.status).toBe(429);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  const problem = await reply.json<QuotaProblem>();
  expect(problem).toMatchObject({ status: 429, code: 'quota_exceeded', limit });
  expect(reply.headers.get('retry-after')).toBe(String(problem.retryAfterSeconds));
  expect(problem.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  return problem;
}

function queuedIds(): string[] {
  return app.fakes.publisher.published.map(
    ({ message }) => (message.body as QueuedChatMessage).chatMessageId,
  );
}

describe('POST /api/chat with QUOTA_CONCURRENT_TURNS', () => {
  beforeEach(async () => {
    appWith({ QUOTA_CONCURRENT_TURNS: '2' });
    await startSessions(3);
  });

  it('refuses a third running turn with 429 and changes nothing; a re-post of an accepted one still passes', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    expect((await post(sessions[0]!, a)).status).toBe(202);
    expect((await post(sessions[1]!, b)).status).toBe(202);

    const problem = await expectQuotaProblem(await post(sessions[2]!, c), 'concurrent-turns');
    expect(problem).toMatchObject({ allowed: 2, current: 2 });
    expect(problem.detail).toContain('QUOTA_CONCURRENT_TURNS');
    expect(queuedIds()).toEqual([a, b]);
    expect([...app.fakes.posted.records.values()].map((record) => record.chatMessageId).sort()).toEqual(
      [a, b].sort(),
    );
    expect([...app.fakes.tickets.grants.values()].map((grant) => grant.sessionId)).not.toContain(sessions[2]);
    expect(state.running('user_001')).toHaveLength(2);

    // The same message again (a client retrying after a lost answer) is the same turn: never refused.
    expect((await post(sessions[0]!, a)).status).toBe(202);
    expect(state.running('user_001')).toHaveLength(2);
  });

  it('a post that fails after its admission (409: another text under the id) leaves no slot taken', async () => {
    const a = randomUUID();
    expect((await post(sessions[0]!, a)).status).toBe(202);
    state.leases.clear();
    const conflict = await post(sessions[0]!, a, 'another text');
    expect(conflict.status).toBe(409);
    expect(state.running('user_001')).toEqual([]);
  });

  it("the chat worker frees the turn's slot once its orchestration has finished, and then admits the next", async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await post(sessions[0]!, a);
    await post(sessions[1]!, b);
    await expectQuotaProblem(await post(sessions[2]!, c), 'concurrent-turns');

    const message = app.fakes.publisher.published[0]?.message.body as QueuedChatMessage;
    const log = { log: () => undefined, warn: () => undefined };
    // The fake's wait answers at once: the worker sees the turn's orchestration as finished.
    await runQueuedTurn(
      { orchestrations: app.fakes.orchestrations, sessions: app.chat.sessions, quota: app.quota },
      message,
      { maxToolRounds: 1, waitMs: 1_000 },
      log,
    );
    expect(state.running('user_001')).toEqual([`${sessions[1]}/${b}`]);
    expect((await post(sessions[2]!, c)).status).toBe(202);
  });
});

describe('a slot taken under QUOTA_CONCURRENT_TURNS and the limit turned off meanwhile', () => {
  beforeEach(async () => {
    appWith({ QUOTA_CONCURRENT_TURNS: '1' });
    await startSessions(2);
  });

  it('is freed by the end of its turn, so the next post is admitted once the limit is on again', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    expect((await post(sessions[0]!, a)).status).toBe(202);
    const message = app.fakes.publisher.published[0]?.message.body as QueuedChatMessage;
    expect(message.quotaSlot).toBe(true);
    const limited = app.quota.config;
    // The turn ends under a runtime started without the limit.
    app.quota.config = { ...limited, concurrentTurns: 0 };
    const log = { log: () => undefined, warn: () => undefined };
    await runQueuedTurn(
      { orchestrations: app.fakes.orchestrations, sessions: app.chat.sessions, quota: app.quota },
      message,
      { maxToolRounds: 1, waitMs: 1_000 },
      log,
    );
    app.quota.config = limited;
    expect(state.running('user_001')).toEqual([]);
    expect((await post(sessions[1]!, b)).status).toBe(202);
  });

  it('is not looked for when the turn was admitted without the limit', async () => {
    app.quota.config = { ...app.quota.config, concurrentTurns: 0 };
    const a = randomUUID();
    expect((await post(sessions[0]!, a)).status).toBe(202);
    const message = app.fakes.publisher.published[0]?.message.body as QueuedChatMessage;
    expect(message.quotaSlot).toBeUndefined();
  });
});

describe('POST /api/chat with QUOTA_TOKENS_PER_DAY and no limit of turns', () => {
  beforeEach(async () => {
    appWith({ QUOTA_TOKENS_PER_DAY: '5000', QUOTA_TURN_TOKEN_ESTIMATE: '5000' });
    await startSessions(2);
  });

  it("reserves the turn's estimate, refuses the next meanwhile, and settles once the turn ends and is recorded", async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    expect((await post(sessions[0]!, a)).status).toBe(202);
    const message = app.fakes.publisher.published[0]?.message.body as QueuedChatMessage;
    // The lease is the turn's to give back, though no slot is limited.
    expect(message.quotaSlot).toBe(true);
    expect(state.reserved('user_001').tokens).toBe(5000);
    const refused = await expectQuotaProblem(await post(sessions[1]!, b), 'tokens-per-day');
    expect(refused).toMatchObject({ allowed: 5000, current: 5000, retryAfterSeconds: 2 });
    expect(queuedIds()).toEqual([a]);

    // The turn's end frees it but keeps the reservation until its usage is recorded; the worker's release after it
    // drops it.
    await releaseTurn(app.quota, message);
    expect(state.reserved('user_001').tokens).toBe(5000);
    await runQueuedTurn(
      { orchestrations: app.fakes.orchestrations, sessions: app.chat.sessions, quota: app.quota },
      message,
      { maxToolRounds: 1, waitMs: 1_000 },
      { log: () => undefined, warn: () => undefined },
    );
    expect(state.reserved('user_001').tokens).toBe(0);
    expect((await post(sessions[1]!, b)).status).toBe(202);
  });
});

describe('POST /api/chat with QUOTA_MESSAGES_PER_MINUTE', () => {
  beforeEach(async () => {
    appWith({ QUOTA_MESSAGES_PER_MINUTE: '2' });
    await startSessions(1);
  });

  it('refuses the third message of the minute, and never a re-post of an accepted one', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    expect((await post(sessions[0]!, a)).status).toBe(202);
    expect((await post(sessions[0]!, b)).status).toBe(202);
    const problem = await expectQuotaProblem(await post(sessions[0]!, c), 'messages-per-minute');
    expect(problem).toMatchObject({ allowed: 2, current: 2 });
    expect(problem.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect((await post(sessions[0]!, a)).status).toBe(202);
    expect(queuedIds()).toEqual([a, b, a]);
  });

  it('a message refused for another reason is not counted', async () => {
    app.fakes.posted.failNext = new ConflictError('the store refused it');
    expect((await post(sessions[0]!, randomUUID())).status).toBe(409);
    expect((await post(sessions[0]!, randomUUID())).status).toBe(202);
    expect((await post(sessions[0]!, randomUUID())).status).toBe(202);
  });
});

describe('exempt callers', () => {
  it('pass every limit', async () => {
    appWith({ QUOTA_CONCURRENT_TURNS: '1', QUOTA_MESSAGES_PER_MINUTE: '1', QUOTA_EXEMPT: 'user_001' });
    await startSessions(3);
    for (const sessionId of sessions) expect((await post(sessionId, randomUUID())).status).toBe(202);
    expect(state.leases.size + state.windows.size).toBe(0);
  });
});
