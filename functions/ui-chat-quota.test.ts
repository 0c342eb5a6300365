// Quotas at POST /api/ui/chat, in process with in-memory stores: a useChat post is admitted or refused as POST
// /api/chat is (429 problem+json naming the limit), and a refused post for a new chat id leaves no session behind.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { MemoryQuotaState } from '../test/support/in-memory-quota.js';
import { postChatEndpoint } from './chat.js';
import { postUiChatEndpoint } from './ui-chat.js';

const USER = 'user_001';
const NEW_CHAT_ID = 'aB3dE6gH9jK2mN5p';

let app: TestApp;
beforeEach(() => {
  app = createTestApp({ settings: { QUOTA_CONCURRENT_TURNS: '1' } });
  app.quota.state = new MemoryQuotaState();
});

const uiPost = (id: string, messageId: string) =>
  callEndpoint(postUiChatEndpoint, app, {
    headers: asUser(USER),
    json: {
      id,
      messages: [{ id: messageId, role: 'user', parts: [{ type: 'text', text: 'hello' }] }],
      trigger: 'submit-message',
    },
  });

async function takeTheOnlySlot(): Promise<string> {
  const { sessionId } = await app.fakes.sessions.create(USER);
  const chatMessageId = randomUUID();
  const reply = await callEndpoint(postChatEndpoint, app, {
    headers: asUser(USER),
    json: { sessionId, chatMessageId, text: 'first' },
  });
  expect(reply.status).toBe(202);
  return chatMessageId;
}

describe('POST /api/ui/chat under QUOTA_CONCURRENT_TURNS', () => {
  it('refuses a turn beyond the limit with the 429 problem and queues nothing', async () => {
    const running = await takeTheOnlySlot();
    const { sessionId } = await app.fakes.sessions.create(USER);

    const reply = await uiPost(sessionId, 'Zx81qWe4Rt7yUi0o');

    expect(reply.status).toBe(429);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    const problem = await reply.json<Record<string, unknown>>();
    expect(problem).toMatchObject({
      code: 'quota_exceeded',
      limit: 'concurrent-turns',
      allowed: 1,
      current: 1,
    });
    expect(reply.headers.get('retry-after')).toBe(String(problem.retryAfterSeconds));
    expect(
      app.fakes.publisher.published.map(
        ({ message }) => (message.body as { chatMessageId: string }).chatMessageId,
      ),
    ).toEqual([running]);
  });

  it('leaves no session for a new chat id whose first post is refused, and the id stays usable', async () => {
    await takeTheOnlySlot();

    expect((await uiPost(NEW_CHAT_ID, 'Zx81qWe4Rt7yUi0o')).status).toBe(429);

    expect(await app.fakes.sessions.find(USER, NEW_CHAT_ID)).toBeUndefined();
    app.quota.state = new MemoryQuotaState();
    const retried = await uiPost(NEW_CHAT_ID, 'Zx81qWe4Rt7yUi0o');
    expect(retried.status).toBe(200);
    await retried.body?.cancel();
    expect(await app.fakes.sessions.find(USER, NEW_CHAT_ID)).toMatchObject({ userId: USER });
  });
});
