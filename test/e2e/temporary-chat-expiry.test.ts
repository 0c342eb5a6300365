// A temporary chat after its time to live (TEMPORARY_CHAT_TTL, ten seconds here): its expiry job deletes it
// everywhere, so no container item but its tombstone names it, its attachment's blob is gone, and it takes no turn.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { SESSIONS_CONTAINER, temporarySessionTtlSeconds } from '../../shared/chat/contracts/documents.js';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';

const TTL_SECONDS = 10;

describe('a temporary chat after its time to live', { timeout: 120_000 }, () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;

  beforeAll(async () => {
    model = await startScriptedModel(() => ({ content: 'Noted, for now.' }));
    runtime = await startTestRuntime({
      settings: { ...model.settings, TEMPORARY_CHAT_TTL: String(TTL_SECONDS) },
    });
    alice = new ChatClient(runtime.url, 'user_001');
  }, 60_000);
  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  });

  /** Every container item whose text names the session, but its tombstone. */
  async function itemsNaming(sessionId: string): Promise<string[]> {
    const found: string[] = [];
    for (const spec of cosmosContainers) {
      const { resources } = await runtime.clients.database
        .container(spec.id)
        .items.query<Record<string, unknown>>('SELECT * FROM c')
        .fetchAll();
      for (const item of resources) {
        const tombstone = spec.id === SESSIONS_CONTAINER && typeof item.deletedAt === 'string';
        if (JSON.stringify(item).includes(sessionId) && !tombstone)
          found.push(`${spec.id}/${String(item.id)}`);
      }
    }
    return found;
  }

  it('is gone everywhere, its attachment with it, while a kept chat stays', async () => {
    const start = async (body: object) =>
      expectStatus<{ sessionId: string }>(
        await fetch(`${runtime.url}/api/session/start`, {
          method: 'POST',
          headers: alice.headers({ 'content-type': 'application/json' }),
          body: JSON.stringify(body),
        }),
        201,
      );
    const temporary = await start({ temporary: true });
    const kept = await start({});
    const { resource } = await runtime.clients.database
      .container(SESSIONS_CONTAINER)
      .item(temporary.sessionId, 'user_001')
      .read<{ ttl?: number }>();
    // The session's own ttl ends it even if its job never runs.
    expect(resource?.ttl).toBe(temporarySessionTtlSeconds(TTL_SECONDS));

    const form = new FormData();
    form.append('file', new Blob(['a note for now'], { type: 'text/plain' }), 'note.txt');
    const { attachmentId } = await expectStatus<{ attachmentId: string }>(
      await fetch(`${runtime.url}/api/attachments`, { method: 'POST', headers: alice.headers(), body: form }),
      201,
    );
    // Before its time: its file is there, and once it took a turn so are its working memory, turn and events.
    expect(
      (await fetch(`${runtime.url}/api/attachments/${attachmentId}`, { headers: alice.headers() })).status,
    ).toBe(200);
    for (const { sessionId } of [temporary, kept]) {
      const chatMessageId = randomUUID();
      const attachments = sessionId === temporary.sessionId ? { attachments: [attachmentId] } : {};
      expect(
        (await alice.post({ sessionId, chatMessageId, text: 'Remember this.', ...attachments })).status,
      ).toBe(202);
      expect((await alice.stream(sessionId, chatMessageId)).at(-1)?.data.type).toBe('message-end');
      if (sessionId === temporary.sessionId)
        expect((await itemsNaming(temporary.sessionId)).length).toBeGreaterThan(1);
    }
    await settle(runtime);

    await vi.waitFor(async () => expect(await itemsNaming(temporary.sessionId)).toEqual([]), {
      timeout: 30_000,
      interval: 250,
    });
    const attachment = await fetch(`${runtime.url}/api/attachments/${attachmentId}`, {
      headers: alice.headers(),
    });
    expect(attachment.status).toBe(404);
    expect(
      (await alice.post({ sessionId: temporary.sessionId, chatMessageId: randomUUID(), text: 'Still here?' }))
        .status,
    ).toBe(404);
    // The chat that is not temporary keeps everything.
    expect((await itemsNaming(kept.sessionId)).length).toBeGreaterThan(0);
    const history = await fetch(`${runtime.url}/api/history/conversations/${kept.sessionId}`, {
      headers: alice.headers(),
    });
    expect(history.status).toBe(200);
  });
});
