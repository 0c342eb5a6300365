// "Download all my data" end to end over the local runtime (Azurite holds the archive) with a scripted model: the
// job writes one archive of the user's conversation, memory, knowledge document and attachment, the owner downloads
// it, nobody else reaches it, and erasing the user deletes it.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import type { ExportView } from '../../shared/account/contracts.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { lovesMemoryOutput } from '../support/loves-memory.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
} from '../support/scripted-model.js';

function structured(request: ChatCompletionRequest): object {
  return lovesMemoryOutput(request, 'The user loves sailing.');
}

describe('downloading all of a user’s data', { timeout: 180_000 }, () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  let live: RealtimeListener;
  let dir: string;

  beforeAll(async () => {
    model = await startScriptedModel((request) =>
      request.stream === true
        ? { content: 'Noted, sailing is a fine thing to love.' }
        : { content: JSON.stringify(structured(request)) },
    );
    runtime = await startTestRuntime({ settings: model.settings });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
    live = await alice.listen();
    dir = await mkdtemp(path.join(tmpdir(), 'account-export-'));
  }, 120_000);
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
    await model?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const call = (as: ChatClient, method: string, route: string, body?: unknown) =>
    fetch(`${runtime.url}${route.startsWith('/') ? route : `/api/${route}`}`, {
      method,
      headers: as.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  async function archiveBlobs(): Promise<string[]> {
    const service = runtime.blob.serviceClient();
    const names: string[] = [];
    for await (const container of service.listContainers())
      for await (const blob of service
        .getContainerClient(container.name)
        .listBlobsFlat({ prefix: 'exports/' }))
        names.push(blob.name);
    return names;
  }

  it('writes one archive its owner alone downloads, and erasing the user deletes it', async () => {
    const sessionId = await alice.startSession();
    const turn = await alice.send(sessionId, 'I love sailing.');
    expect((await live.waitForTerminal(turn)).at(-1)).toMatchObject({ type: 'message-end' });
    const form = new FormData();
    form.append('file', new Blob(['notes about sailing'], { type: 'text/plain' }), 'notes.txt');
    const attachment = await expectStatus<{ attachmentId: string }>(
      await fetch(`${runtime.url}/api/attachments`, { method: 'POST', headers: alice.headers(), body: form }),
      201,
    );
    const { document } = await expectStatus<{ document: { documentId: string } }>(
      await call(alice, 'POST', 'knowledge/documents', {
        title: 'Boats',
        fileName: 'boats.md',
        contentBase64: Buffer.from('# Boats\n\nSailing boats have sails.').toString('base64'),
      }),
      202,
    );
    await settle(runtime);

    const started = await call(alice, 'POST', 'account/users/user_001/export');
    const job = await expectStatus<ExportView>(started, 202);
    expect(started.headers.get('location')).toBe(`/api/account/users/user_001/export/${job.exportId}`);
    expect(job.status).toBe('running');
    const statusRoute = `account/users/user_001/export/${job.exportId}`;
    const ready = await vi.waitFor(
      async () => {
        const status = await expectStatus<ExportView>(await call(alice, 'GET', statusRoute), 200);
        expect(status.status).toBe('ready');
        return status;
      },
      { timeout: 60_000, interval: 200 },
    );
    expect(ready.contents).toEqual({ conversations: 1, memoryLines: 2, documents: 1, attachments: 1 });
    expect(ready.download?.url).toBe(`/api/${statusRoute}/archive`);

    // Nobody else: another user's path is refused, and the id is unknown under their own.
    expect((await call(bob, 'GET', statusRoute)).status).toBe(403);
    expect((await call(bob, 'GET', `account/users/user_002/export/${job.exportId}`)).status).toBe(404);
    expect((await call(bob, 'GET', `account/users/user_002/export/${job.exportId}/archive`)).status).toBe(
      404,
    );
    expect((await call(bob, 'POST', 'account/users/user_001/export')).status).toBe(403);

    const download = await call(alice, 'GET', ready.download?.url ?? '');
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/gzip');
    const file = path.join(dir, 'my-data.tar.gz');
    await writeFile(file, Buffer.from(await download.arrayBuffer()));
    const listed = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).trim().split('\n').sort();
    expect(listed).toEqual(
      [
        'README.txt',
        `conversations/${sessionId}.json`,
        'memory/memory.ndjson',
        `knowledge/${document.documentId}.json`,
        `attachments/${attachment.attachmentId}/notes.txt`,
      ].sort(),
    );
    execFileSync('tar', ['-xzf', file, '-C', dir]);
    const conversation = JSON.parse(
      await readFile(path.join(dir, 'conversations', `${sessionId}.json`), 'utf8'),
    ) as {
      messages: { content: string }[];
    };
    expect(conversation.messages.map((message) => message.content)).toEqual([
      'I love sailing.',
      'Noted, sailing is a fine thing to love.',
    ]);
    const memory = (await readFile(path.join(dir, 'memory', 'memory.ndjson'), 'utf8')).trim().split('\n');
    expect(memory.map((line) => JSON.parse(line) as { type: string; statement?: string })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'fact', statement: 'The user loves sailing.' }),
        expect.objectContaining({ type: 'summary' }),
      ]),
    );
    const knowledge = JSON.parse(
      await readFile(path.join(dir, 'knowledge', `${document.documentId}.json`), 'utf8'),
    ) as { title: string; text: string };
    expect(knowledge.title).toBe('Boats');
    expect(knowledge.text).toContain('Sailing boats have sails.');
    expect(await readFile(path.join(dir, 'attachments', attachment.attachmentId, 'notes.txt'), 'utf8')).toBe(
      'notes about sailing',
    );
    expect(await archiveBlobs()).toHaveLength(1);
    expect((await readdir(dir)).length).toBeGreaterThan(0);

    // Erasing the user takes the archive and its record with everything else.
    expect((await call(alice, 'DELETE', 'account/users/user_001/data')).status).toBe(204);
    await settle(runtime);
    expect(await archiveBlobs()).toEqual([]);
    expect((await call(alice, 'GET', statusRoute)).status).toBe(404);
    expect((await call(alice, 'GET', `${statusRoute}/archive`)).status).toBe(404);
  });
});
