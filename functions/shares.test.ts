// Sharing by link in process: real HttpRequest objects, the real use-cases, the in-memory history and share
// store. What a share shows (and never shows), who may revoke it, expiry, deletion, SHARING=off, and the copy
// that a next turn's working memory reads.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { rebuildWorkingMemory } from '../shared/chat/working-memory-rebuild.js';
import type { HistoryMessage, StoredMessage } from '../shared/history/contracts.js';
import type { EndpointDefinition } from '../shared/http/endpoint.js';
import type { SharedConversation, ShareLinkView } from '../shared/sharing/contracts.js';
import { asUser, callEndpoint, type CallOptions } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { deleteConversationEndpoint } from './history-api.js';
import {
  copyShareEndpoint,
  createShareEndpoint,
  listSharesEndpoint,
  readShareEndpoint,
  revokeShareEndpoint,
} from './shares.js';

let app: TestApp;
beforeEach(() => {
  app = createTestApp();
});

const at = (second: number) => new Date(Date.UTC(2026, 10, 22, 10, 0, second)).toISOString();

/** A stored conversation of `turns`; the second answer used a tool and cited a source. */
async function seed(userId: string, turns: [string, string][]) {
  const { sessionId } = await app.fakes.sessions.create(userId);
  const messages: HistoryMessage[] = turns.flatMap(([question, answer], turn) => {
    const chatMessageId = randomUUID();
    return [
      {
        messageId: `${chatMessageId}_user`,
        chatMessageId,
        role: 'user' as const,
        content: question,
        timestamp: at(turn * 2),
        ordinal: turn * 2,
      },
      {
        messageId: `${chatMessageId}_assistant`,
        chatMessageId,
        role: 'assistant' as const,
        content: answer,
        timestamp: at(turn * 2 + 1),
        finishReason: 'stop',
        ordinal: turn * 2 + 1,
        ...(turn === 1
          ? {
              toolCalls: [
                {
                  id: 'call_1',
                  name: 'search_knowledge_base',
                  arguments: '{"query":"secret plan"}',
                  result: 'x'.repeat(5_000),
                  isError: false,
                  round: 0,
                },
              ],
              sources: [
                {
                  chunkId: 'c1',
                  documentId: '0123456789abcdef0123456789abcdef',
                  title: 'Handbook',
                  heading: 'Parental leave',
                  citation: 'Handbook, p. 2',
                  excerpt: 'a passage of the handbook',
                  score: 0.9,
                },
              ],
            }
          : {}),
      },
    ];
  });
  await app.fakes.headers.touch({
    userId,
    sessionId,
    createdAt: at(0),
    lastActivity: messages.at(-1)!.timestamp,
    messageCount: messages.length,
    preview: 'preview',
    firstUserText: messages[0]!.content,
  });
  await app.fakes.longTermMessages.put(messages.map((m) => stored(userId, sessionId, m)));
  await app.fakes.headers.recordPersisted(userId, sessionId, {
    upTo: messages.length,
    at: at(10),
    tokens: { prompt: 0, completion: 0, total: 0 },
    textTokens: 0,
  });
  await app.fakes.longTermMessages.putSystemPrompt(userId, sessionId, {
    content: 'You are talking to Alice, who likes secret plans.',
    personalised: true,
    createdAt: at(0),
  });
  return { sessionId, messages };
}

function stored(userId: string, sessionId: string, message: HistoryMessage): StoredMessage {
  return { ...message, id: message.messageId, kind: 'message', userId, sessionId };
}

function call<P, Q, B, A extends 'caller' | 'anonymous'>(
  definition: EndpointDefinition<TestApp, P, Q, B, A>,
  options: CallOptions,
) {
  return callEndpoint(definition, app, options);
}

async function share(userId: string, sessionId: string, json?: unknown) {
  const reply = await call(createShareEndpoint, {
    path: `/api/history/conversations/${sessionId}/shares`,
    params: { sessionId },
    headers: asUser(userId),
    ...(json === undefined ? {} : { json }),
  });
  return reply;
}

async function open(shareId: string) {
  return call(readShareEndpoint, { path: `/api/shares/${shareId}`, params: { shareId } });
}

const TURNS: [string, string][] = [
  ['Plan a trip to Lisbon', 'Go in May.'],
  ['What should I pack?', 'Light clothes.'],
  ['Thanks', 'You are welcome.'],
];

describe('sharing a conversation by link', () => {
  it('shares the shown branch to anyone, signed out, without the prompt, tool calls or source text', async () => {
    const { sessionId, messages } = await seed('user_001', TURNS);
    const created = await share('user_001', sessionId);
    expect(created.status).toBe(201);
    const { shareId, url, messageCount } = await created.json<{
      shareId: string;
      url: string;
      messageCount: number;
    }>();
    expect(shareId).toMatch(/^[A-Za-z0-9_-]{21}[AQgw]$/);
    expect(url).toBe(`http://localhost:7071/s/${shareId}`);
    expect(messageCount).toBe(6);

    const reply = await open(shareId);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-robots-tag')).toContain('noindex');
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const body = await reply.json<SharedConversation>();
    expect(body.messages.map((m) => [m.role, m.content])).toEqual(messages.map((m) => [m.role, m.content]));
    expect(body.messages[3]?.sources).toEqual([
      { title: 'Handbook', heading: 'Parental leave', citation: 'Handbook, p. 2' },
    ]);
    const text = JSON.stringify(body);
    for (const secret of [
      'secret plan',
      'Alice',
      'user_001',
      sessionId,
      'a passage of',
      'search_knowledge_base',
    ])
      expect(text).not.toContain(secret);
  });

  it('shares up to a message, with tool calls cut short only when the owner includes them', async () => {
    const { sessionId, messages } = await seed('user_001', TURNS);
    const reply = await share('user_001', sessionId, {
      upToMessageId: messages[3]!.messageId,
      includeToolCalls: true,
    });
    const { shareId } = await reply.json<{ shareId: string }>();
    const body = await (await open(shareId)).json<SharedConversation>();
    expect(body.messages).toHaveLength(4);
    expect(body.includesToolCalls).toBe(true);
    const call0 = body.messages[3]?.toolCalls?.[0];
    expect(call0?.arguments).toBe('{"query":"secret plan"}');
    expect(call0?.result.length).toBeLessThan(2_010);

    const unknown = await share('user_001', sessionId, { upToMessageId: `${randomUUID()}_user` });
    expect(unknown.status).toBe(400);
  });

  it("refuses another user's conversation and a past expiry", async () => {
    const { sessionId } = await seed('user_001', TURNS);
    expect((await share('user_002', sessionId)).status).toBe(404);
    expect((await share('user_001', sessionId, { expiresAt: '2020-01-01T00:00:00Z' })).status).toBe(400);
    expect(app.fakes.shares.heads.size).toBe(0);
  });

  it('lists the owner’s links, and refuses to list another user’s', async () => {
    const { sessionId } = await seed('user_001', TURNS);
    const { shareId } = await (await share('user_001', sessionId)).json<{ shareId: string }>();
    const list = await call(listSharesEndpoint, {
      path: '/api/history/users/user_001/shares',
      params: { userId: 'user_001' },
      headers: asUser('user_001'),
    });
    const { shares } = await list.json<{ shares: ShareLinkView[] }>();
    expect(shares).toEqual([
      expect.objectContaining({
        shareId,
        sessionId,
        url: `http://localhost:7071/s/${shareId}`,
        expiresAt: null,
      }),
    ]);
    const other = await call(listSharesEndpoint, {
      path: '/api/history/users/user_001/shares',
      params: { userId: 'user_001' },
      headers: asUser('user_002'),
    });
    expect(other.status).toBe(403);
  });

  it('revokes at once for the owner only; another user is told 404, as for an unknown share', async () => {
    const { sessionId } = await seed('user_001', TURNS);
    const { shareId } = await (await share('user_001', sessionId)).json<{ shareId: string }>();
    const revoke = (userId: string) =>
      call(revokeShareEndpoint, {
        method: 'DELETE',
        path: `/api/shares/${shareId}`,
        params: { shareId },
        headers: asUser(userId),
      });
    expect((await revoke('user_002')).status).toBe(404);
    expect((await open(shareId)).status).toBe(200);
    expect((await revoke('user_001')).status).toBe(204);
    const gone = await open(shareId);
    expect(gone.status).toBe(404);
    expect(app.fakes.shares.chunks.has(shareId)).toBe(false);
    expect((await revoke('user_001')).status).toBe(404);
  });

  it('answers 404 for an expired share, and 400 for an id of another form', async () => {
    const { sessionId } = await seed('user_001', TURNS);
    const soon = new Date(Date.now() + 60_000).toISOString();
    const { shareId } = await (
      await share('user_001', sessionId, { expiresAt: soon })
    ).json<{ shareId: string }>();
    expect((await open(shareId)).status).toBe(200);
    app.fakes.shares.heads.get(shareId)!.expiresAt = new Date(Date.now() - 1).toISOString();
    expect((await open(shareId)).status).toBe(404);
    expect((await open('..')).status).toBe(400);
  });

  it('revokes the links of a deleted conversation', async () => {
    const { sessionId } = await seed('user_001', TURNS);
    const { shareId } = await (await share('user_001', sessionId)).json<{ shareId: string }>();
    const deleted = await call(deleteConversationEndpoint, {
      method: 'DELETE',
      path: `/api/history/conversations/${sessionId}`,
      params: { sessionId },
      headers: asUser('user_001'),
    });
    expect(deleted.status).toBe(204);
    expect((await open(shareId)).status).toBe(404);
    expect(app.fakes.shares.linkItems.size).toBe(0);
    expect(app.fakes.shares.heads.size).toBe(0);
  });

  it('hides a share as soon as its conversation is marked for deletion', async () => {
    const { sessionId } = await seed('user_001', TURNS);
    const { shareId } = await (await share('user_001', sessionId)).json<{ shareId: string }>();
    await app.fakes.sessions.markDeleting('user_001', sessionId);
    expect((await open(shareId)).status).toBe(404);
  });

  it('copies a share into a new conversation of the viewer that the next turn continues', async () => {
    const { sessionId, messages } = await seed('user_001', TURNS);
    const { shareId } = await (await share('user_001', sessionId)).json<{ shareId: string }>();
    const reply = await call(copyShareEndpoint, {
      path: `/api/shares/${shareId}/copy`,
      params: { shareId },
      headers: asUser('user_002'),
    });
    expect(reply.status).toBe(201);
    const copy = await reply.json<{ sessionId: string; title: string; messageCount: number }>();
    expect(copy.messageCount).toBe(6);
    expect(copy.sessionId).not.toBe(sessionId);
    expect(await app.fakes.sessions.find('user_002', copy.sessionId)).toBeDefined();
    const header = await app.fakes.headers.get('user_002', copy.sessionId);
    expect(header).toMatchObject({ messageCount: 6, persistedCount: 6, titleSource: 'user' });

    const memory = await rebuildWorkingMemory(
      { headers: app.fakes.headers, messages: app.fakes.longTermMessages },
      'user_002',
      copy.sessionId,
      1_000_000,
    );
    expect(memory.messages.map((m) => [m.role, m.content])).toEqual(messages.map((m) => [m.role, m.content]));
    expect(memory.messageCount).toBe(6);
    expect(memory.systemPrompt).toBeUndefined();
    // Turns pair up as they were asked and answered.
    expect(new Set(memory.messages.map((m) => m.chatMessageId)).size).toBe(3);

    const signedOut = await call(copyShareEndpoint, {
      path: `/api/shares/${shareId}/copy`,
      params: { shareId },
    });
    expect(signedOut.status).toBe(401);
  });

  it('refuses a conversation too long to share whole with 413, and shares it up to an earlier message', async () => {
    const long = 'x'.repeat(1_000);
    const turns = Array.from({ length: 2_200 }, (_, n): [string, string] => [`question ${n} ${long}`, long]);
    const { sessionId, messages } = await seed('user_001', turns);
    const refused = await share('user_001', sessionId);
    expect(refused.status).toBe(413);
    expect(await refused.json()).toMatchObject({ code: 'share_too_large' });
    expect(app.fakes.shares.heads.size).toBe(0);

    const upTo = await share('user_001', sessionId, { upToMessageId: messages[1_999]!.messageId });
    expect(upTo.status).toBe(201);
    const { shareId } = await upTo.json<{ shareId: string }>();
    expect(app.fakes.shares.chunks.get(shareId)!.length).toBeGreaterThan(1);
    expect((await (await open(shareId)).json<SharedConversation>()).messages).toHaveLength(2_000);
  }, 60_000);

  it('turns every route off with SHARING=off', async () => {
    app = createTestApp({ settings: { SHARING: 'off' } });
    const { sessionId } = await seed('user_001', TURNS);
    const refused = await share('user_001', sessionId);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'sharing_off' });
    const read = await open('AAAAAAAAAAAAAAAAAAAAAA');
    expect(read.status).toBe(403);
  });
});
