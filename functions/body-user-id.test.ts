// A body (JSON or form) naming another user's userId is refused with 403 problem+json on every route that takes a
// body, including those whose schema has no userId (memory and knowledge search, rename, branch switch, upload),
// and nothing changes; the caller's own userId in the body is accepted as before.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../shared/app/app.js';
import type { ConversationSummary } from '../shared/history/contracts.js';
import type { EndpointDefinition } from '../shared/http/endpoint.js';
import { KNOWLEDGE_INGEST_QUEUE } from '../shared/knowledge/contracts.js';
import { asUser, callEndpoint, type CallOptions, type Reply } from '../test/support/call-endpoint.js';
import { KeywordEmbeddings } from '../test/support/in-memory-knowledge.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import {
  listConversationsEndpoint,
  renameConversationEndpoint,
  switchBranchEndpoint,
} from './history-api.js';
import { listDocumentsEndpoint, searchKnowledgeEndpoint, uploadDocumentEndpoint } from './knowledge.js';
import { searchConversationsEndpoint } from './memory-api.js';

const ALICE = 'user_001';
const BOB = 'user_002';

let app: TestApp;
beforeEach(() => {
  // Searches embed their query: a model whose embeddings count a few words answers them offline.
  app = createTestApp({ llm: new KeywordEmbeddings(['lisbon', 'parental', 'leave']) });
});

function call<P, Q, B>(definition: EndpointDefinition<App, P, Q, B>, options: CallOptions): Promise<Reply> {
  return callEndpoint(definition, app, { ...options, headers: asUser(ALICE, options.headers) });
}

async function expectForbidden(reply: Reply): Promise<void> {
  const problem = await reply.json<{ status: number; code: string; detail: string }>();
  expect(reply.status, JSON.stringify(problem)).toBe(403);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  expect(problem).toMatchObject({ status: 403, code: 'forbidden' });
  expect(problem.detail).toMatch(/only their own data/);
}

async function titles(): Promise<string[]> {
  const reply = await call(listConversationsEndpoint, {
    path: `/api/history/users/${ALICE}/conversations`,
    params: { userId: ALICE },
  });
  const page = await reply.json<{ conversations: ConversationSummary[] }>();
  return page.conversations.map((conversation) => conversation.title);
}

async function aliceConversation(): Promise<string> {
  const { sessionId } = await app.fakes.sessions.create(ALICE);
  const at = new Date(Date.UTC(2026, 10, 22, 10)).toISOString();
  await app.fakes.headers.touch({
    userId: ALICE,
    sessionId,
    createdAt: at,
    lastActivity: at,
    messageCount: 1,
    preview: 'Plan a trip to Lisbon',
    firstUserText: 'Plan a trip to Lisbon',
  });
  return sessionId;
}

describe("a body's userId that is not the caller's", () => {
  it('is refused on memory search (403), and the own userId is searched as before', async () => {
    const search = (userId: string) =>
      call(searchConversationsEndpoint, {
        method: 'POST',
        path: `/api/memory/users/${ALICE}/conversations/search`,
        params: { userId: ALICE },
        json: { query: 'Lisbon', limit: 3, userId },
      });
    await expectForbidden(await search(BOB));
    expect((await search(ALICE)).status).toBe(200);
  });

  it('is refused on knowledge search (403)', async () => {
    const search = (userId: unknown) =>
      call(searchKnowledgeEndpoint, { method: 'POST', json: { query: 'parental leave', userId } });
    await expectForbidden(await search(BOB));
    await expectForbidden(await search(42));
    expect((await search(ALICE)).status).toBe(200);
  });

  it('is refused on rename (403), and the title stays as it was', async () => {
    const sessionId = await aliceConversation();
    const before = await titles();
    const rename = (userId: string) =>
      call(renameConversationEndpoint, {
        method: 'PUT',
        path: `/api/history/conversations/${sessionId}/title`,
        params: { sessionId },
        json: { title: 'Renamed', userId },
      });
    await expectForbidden(await rename(BOB));
    expect(await titles()).toEqual(before);
    expect((await rename(ALICE)).status).toBe(200);
    expect(await titles()).toEqual(['Renamed']);
  });

  it('is refused on branch switch (403) before the conversation is looked at', async () => {
    const sessionId = await aliceConversation();
    const before = await titles();
    const reply = await call(switchBranchEndpoint, {
      method: 'PUT',
      path: `/api/history/conversations/${sessionId}/branch`,
      params: { sessionId },
      json: { chatMessageId: randomUUID(), userId: BOB },
    });
    await expectForbidden(reply);
    expect(await titles()).toEqual(before);
  });

  async function expectNothingUploaded(): Promise<void> {
    expect(app.fakes.publisher.published.filter((p) => p.entity === KNOWLEDGE_INGEST_QUEUE)).toEqual([]);
    const listed = await call(listDocumentsEndpoint, {});
    expect((await listed.json<{ documents: unknown[] }>()).documents).toEqual([]);
  }

  it('is refused on a JSON upload (403), storing and queueing nothing', async () => {
    const reply = await call(uploadDocumentEndpoint, {
      method: 'POST',
      json: { fileName: 'notes.md', contentBase64: Buffer.from('# Notes').toString('base64'), userId: BOB },
    });
    await expectForbidden(reply);
    await expectNothingUploaded();
  });

  it('is refused on a multipart upload whose form names another userId (403), storing nothing', async () => {
    const form = new FormData();
    form.append('userId', BOB);
    form.append('file', new Blob(['# Notes'], { type: 'text/markdown' }), 'notes.md');
    await expectForbidden(await call(uploadDocumentEndpoint, { method: 'POST', form }));
    await expectNothingUploaded();

    const own = new FormData();
    own.append('userId', ALICE);
    own.append('file', new Blob(['# Notes'], { type: 'text/markdown' }), 'notes.md');
    expect((await call(uploadDocumentEndpoint, { method: 'POST', form: own })).status).toBe(202);
  });
});
