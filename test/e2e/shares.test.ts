// Sharing by link over the local runtime: share, open signed out (noindex), another user refused, revoked at once,
// a deleted conversation's link gone, and "Continue this conversation" giving the reader a conversation of their
// own whose next turn is sent the shared messages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import type { SharedConversation, ShareLinkView } from '../../shared/sharing/contracts.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';

async function turn(client: ChatClient, live: RealtimeListener, sessionId: string, text: string) {
  const id = await client.send(sessionId, text);
  const events = await live.waitForTerminal(id);
  const end = events.at(-1);
  expect(end?.type).toBe('message-end');
  return end as Extract<ChatEvent, { type: 'message-end' }>;
}

describe('sharing by link on the local runtime', () => {
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  let aliceLive: RealtimeListener;
  let bobLive: RealtimeListener;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
    aliceLive = await alice.listen();
    bobLive = await bob.listen();
  }, 60_000);
  afterAll(async () => {
    aliceLive?.stop();
    bobLive?.stop();
    await runtime?.stop();
  });

  const as = (client: ChatClient | undefined, path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}/api/${path}`, {
      ...init,
      headers: {
        ...(client === undefined ? {} : client.headers()),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
    });

  async function conversation(texts: string[]) {
    const sessionId = await alice.startSession();
    for (const text of texts) await turn(alice, aliceLive, sessionId, text);
    await settle(runtime);
    return sessionId;
  }

  async function share(sessionId: string) {
    return expectStatus<{ shareId: string; url: string; messageCount: number }>(
      await as(alice, `history/conversations/${sessionId}/shares`, { method: 'POST', body: '{}' }),
      201,
    );
  }

  it('shares, opens signed out, lists, refuses another user, then revokes at once', async () => {
    const sessionId = await conversation(['Plan a trip to Lisbon', 'reply with 5 words']);
    const { shareId, url, messageCount } = await share(sessionId);
    expect(url).toBe(`${runtime.url}/s/${shareId}`);
    expect(messageCount).toBe(4);

    const opened = await as(undefined, `shares/${shareId}`);
    expect(opened.headers.get('x-robots-tag')).toContain('noindex');
    const shared = await expectStatus<SharedConversation>(opened, 200);
    expect(shared.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(shared.messages[0]?.content).toBe('Plan a trip to Lisbon');
    expect(shared.messages[3]?.content.split(' ')).toHaveLength(5);
    expect(JSON.stringify(shared)).not.toContain('user_001');

    const { shares } = await expectStatus<{ shares: ShareLinkView[] }>(
      await as(alice, 'history/users/user_001/shares'),
      200,
    );
    expect(shares.map((link) => link.shareId)).toContain(shareId);
    expect((await as(bob, 'history/users/user_001/shares')).status).toBe(403);

    expect((await as(bob, `shares/${shareId}`, { method: 'DELETE' })).status).toBe(404);
    expect((await as(undefined, `shares/${shareId}`)).status).toBe(200);
    expect((await as(alice, `shares/${shareId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await as(undefined, `shares/${shareId}`)).status).toBe(404);
    expect((await as(undefined, 'shares/AAAAAAAAAAAAAAAAAAAAAA')).status).toBe(404);
  }, 120_000);

  it("takes a deleted conversation's link with it", async () => {
    const sessionId = await conversation(['Tell me about Porto']);
    const { shareId } = await share(sessionId);
    expect((await as(undefined, `shares/${shareId}`)).status).toBe(200);
    expect((await as(alice, `history/conversations/${sessionId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await as(undefined, `shares/${shareId}`)).status).toBe(404);
    const { shares } = await expectStatus<{ shares: ShareLinkView[] }>(
      await as(alice, 'history/users/user_001/shares'),
      200,
    );
    expect(shares.map((link) => link.shareId)).not.toContain(shareId);
  }, 120_000);

  it("continues a shared conversation as the reader's own, whose next turn is sent the shared messages", async () => {
    const texts = ['Plan a trip to Lisbon in May with my sister', 'What should we pack for the coast?'];
    const sessionId = await conversation(texts);
    const { shareId } = await share(sessionId);
    expect((await as(undefined, `shares/${shareId}/copy`, { method: 'POST' })).status).toBe(401);
    const copy = await expectStatus<{ sessionId: string; messageCount: number }>(
      await as(bob, `shares/${shareId}/copy`, { method: 'POST' }),
      201,
    );
    expect(copy.messageCount).toBe(4);

    // The same question in a fresh conversation, and in the copy: the copy's prompt also holds the shared turns.
    const fresh = await bob.startSession();
    const alone = await turn(bob, bobLive, fresh, 'And the weather?');
    await bobLive.follow(copy.sessionId);
    const continued = await turn(bob, bobLive, copy.sessionId, 'And the weather?');
    expect(continued.usage?.promptTokens).toBeGreaterThan(alone.usage?.promptTokens ?? Infinity);
    await settle(runtime);

    const memory = await runtime.app.chat.turn.workingMemory.load('user_002', copy.sessionId);
    expect(memory.messages.map((m) => m.content).slice(0, 3)).toEqual([
      texts[0],
      expect.any(String),
      texts[1],
    ]);
    expect(memory.messageCount).toBe(6);
    const history = await expectStatus<{ messages: { content: string; ordinal: number }[] }>(
      await as(bob, `history/conversations/${copy.sessionId}`),
      200,
    );
    expect(history.messages.map((m) => m.ordinal)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(history.messages[4]?.content).toBe('And the weather?');
    // The copy is the reader's: the owner cannot read it.
    expect((await as(alice, `history/conversations/${copy.sessionId}`)).status).toBe(404);
  }, 120_000);
});
