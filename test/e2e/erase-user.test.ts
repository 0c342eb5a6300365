// "Delete all my data" end to end over the local runtime with a scripted model: a user with conversations, memory,
// an attachment, a knowledge document, an assistant and a project, and a turn still streaming, is erased so that no
// container item and no blob names them afterwards, the running turn brings nothing back, and no one else is touched.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { lovesMemoryOutput } from '../support/loves-memory.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
} from '../support/scripted-model.js';

const HELD = 'Hold this answer, I love rowing.';

function structured(request: ChatCompletionRequest): object {
  return lovesMemoryOutput(request, 'The user said what they love.');
}

describe('deleting all of a user’s data', { timeout: 180_000 }, () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  let live: RealtimeListener;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));

  beforeAll(async () => {
    model = await startScriptedModel((request) => {
      if (request.stream !== true) return { content: JSON.stringify(structured(request)) };
      const question = request.messages.at(-1)?.content ?? '';
      if (question === HELD)
        return { content: 'Rowing is a fine thing to love, truly.', hold: { afterChunks: 1, until: held } };
      return { content: 'Noted, a fine thing to love.' };
    });
    runtime = await startTestRuntime({ settings: { ...model.settings, CHAT_CANCEL_POLL_MS: '60000' } });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
    live = await alice.listen();
  }, 120_000);
  afterAll(async () => {
    release();
    live?.stop();
    await runtime?.stop();
    await model?.close();
  });

  const call = (as: ChatClient, method: string, path: string, body?: unknown) =>
    fetch(`${runtime.url}/api/${path}`, {
      method,
      headers: as.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /** Every container item that names the user, but the conversations' tombstones. */
  async function itemsNaming(userId: string, sessionIds: readonly string[]): Promise<string[]> {
    const found: string[] = [];
    for (const spec of cosmosContainers) {
      const { resources } = await runtime.clients.database
        .container(spec.id)
        .items.query<Record<string, unknown>>('SELECT * FROM c')
        .fetchAll();
      for (const item of resources) {
        const text = JSON.stringify(item);
        const names = text.includes(userId) || sessionIds.some((id) => text.includes(id));
        const tombstone = spec.id === 'sessions' && typeof item.deletedAt === 'string';
        if (names && !tombstone) found.push(`${spec.id}/${String(item.id)}`);
      }
    }
    return found;
  }

  async function blobNames(): Promise<string[]> {
    const service = runtime.blob.serviceClient();
    const names: string[] = [];
    for await (const container of service.listContainers())
      for await (const blob of service.getContainerClient(container.name).listBlobsFlat())
        names.push(`${container.name}/${blob.name}`);
    return names;
  }

  it('leaves nothing of the user in any container or blob, and a running turn brings nothing back', async () => {
    const done = await alice.startSession();
    const first = await alice.send(done, 'I love sailing.');
    expect((await live.waitForTerminal(first)).at(-1)).toMatchObject({ type: 'message-end' });
    const form = new FormData();
    form.append('file', new Blob(['notes about sailing'], { type: 'text/plain' }), 'notes.txt');
    await expectStatus(
      await fetch(`${runtime.url}/api/attachments`, { method: 'POST', headers: alice.headers(), body: form }),
      201,
    );
    await expectStatus(
      await call(alice, 'POST', 'knowledge/documents', {
        title: 'Boats',
        fileName: 'boats.md',
        contentBase64: Buffer.from('# Boats\n\nSailing boats have sails.').toString('base64'),
      }),
      202,
    );
    await expectStatus(
      await call(alice, 'POST', 'projects', { name: 'Sea', instructions: 'About the sea.' }),
      201,
    );
    await expectStatus(
      await call(alice, 'POST', 'assistants', { name: 'Skipper', instructions: 'Be brief.' }),
      201,
    );
    await expectStatus(
      await call(bob, 'POST', 'projects', { name: 'Bob’s', instructions: 'Bob only.' }),
      201,
    );
    await expectStatus(await call(alice, 'POST', 'api-keys', { name: 'laptop' }), 201);
    await settle(runtime);
    const before = await expectStatus<{ facts: unknown[] }>(
      await call(alice, 'GET', 'memory/users/user_001/memories'),
      200,
    );
    expect(before.facts).toHaveLength(1);
    // A user's blobs sit under a prefix of a hash of their id.
    const prefix = createHash('sha256').update('user_001').digest('hex').slice(0, 32);
    expect((await blobNames()).some((name) => name.includes(prefix))).toBe(true);

    // A turn streaming when the erase comes.
    const running = await alice.startSession();
    await alice.send(running, HELD);
    await vi.waitFor(
      () =>
        expect(
          model.requests.some(
            (request) => request.stream === true && request.messages.at(-1)?.content === HELD,
          ),
        ).toBe(true),
      { timeout: 30_000 },
    );
    // What the sweep must find gone: the user's items are in most containers now.
    const containersBefore = new Set(
      (await itemsNaming('user_001', [done, running])).map((item) => item.split('/')[0]),
    );
    expect([...containersBefore].sort()).toEqual(
      expect.arrayContaining([
        'api-keys',
        'user-api-keys',
        'assistants',
        'conversation-summaries',
        'knowledge-library-documents',
        'knowledge-library-chunks',
        'usage',
        'turn-events',
        'conversation-messages',
        'profile-facts',
        'projects',
        'sessions',
      ]),
    );
    expect((await call(bob, 'DELETE', 'account/users/user_001/data')).status).toBe(403);
    expect((await call(alice, 'DELETE', 'account/users/user_001/data')).status).toBe(204);
    release();
    await settle(runtime);

    expect(await itemsNaming('user_001', [done, running])).toEqual([]);
    expect((await blobNames()).filter((name) => name.includes('user_001') || name.includes(prefix))).toEqual(
      [],
    );
    const after = await expectStatus<{ facts: unknown[]; summaries: unknown[] }>(
      await call(alice, 'GET', 'memory/users/user_001/memories'),
      200,
    );
    expect(after).toMatchObject({ facts: [], summaries: [] });
    expect(
      (await alice.post({ sessionId: running, chatMessageId: crypto.randomUUID(), text: 'back?' })).status,
    ).toBe(404);
    // Idempotent, and another user's data untouched.
    expect((await call(alice, 'DELETE', 'account/users/user_001/data')).status).toBe(204);
    const bobs = await expectStatus<{ projects: { name: string }[] }>(
      await call(bob, 'GET', 'projects'),
      200,
    );
    expect(bobs.projects.map((project) => project.name)).toEqual(['Bob’s']);
  });
});
