// Direct uploads end to end over Azurite (HTTPS, OAuth): a write-only URL for one blob, the PUT from the client, the
// checks of /complete (a good image stored re-encoded; HTML named .png refused and deleted), CORS for the page, the
// sweep of uploads never completed and of files never attached, and the same bytes sent again kept once.
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { sweepAttachments } from '../../shared/attachments/direct-uploads.js';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import {
  expectProblem,
  sha256,
  useAttachmentRuntime,
  type StoredAttachment,
} from '../support/attachment-runtime.js';
import { settle } from '../support/local-runtime.js';

interface Started {
  attachmentId: string;
  uploadUrl: string;
  expiresOn: string;
}

/** One call to a blob URL the API handed out: the runtime's own origin, plain HTTP, no certificate to trust. */
function blobCall(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: Uint8Array,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const call = httpRequest(url, { method, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
    });
    call.on('error', reject);
    call.end(body === undefined ? undefined : Buffer.from(body));
  });
}

describe('direct uploads over Azurite', { timeout: 120_000 }, () => {
  const env = useAttachmentRuntime();

  const json = (client: ChatClient, path: string, body?: unknown) =>
    fetch(`${env.runtime.url}/api/${path}`, {
      method: 'POST',
      headers: client.headers({ 'content-type': 'application/json' }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const start = async (client: ChatClient, filename: string, mediaType: string, size: number) =>
    expectStatus<Started>(await json(client, 'attachments/uploads', { filename, mediaType, size }), 201);
  const put = (url: string, bytes: Uint8Array, type = 'application/octet-stream') =>
    blobCall(url, 'PUT', { 'x-ms-blob-type': 'BlockBlob', 'content-type': type }, bytes);
  it('stores a photo uploaded straight to its blob, checked and re-encoded, its URL good for that blob only', async () => {
    const photo = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#48c' } })
      .jpeg()
      .withExif({
        IFD0: { Make: 'PhoneMaker' },
        IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1' },
      })
      .toBuffer();
    const started = await start(env.alice, 'trip.jpg', 'image/jpeg', photo.length);
    expect(started.attachmentId).toMatch(/^att-[0-9a-f]{32}$/);
    const url = new URL(started.uploadUrl);
    // On the runtime's own origin: its proxy forwards to the emulator, whose certificate no browser trusts.
    expect(url.origin).toBe(env.runtime.url);
    expect(url.pathname).toMatch(/^\/local\/blob\/devstoreaccount1\/attachments\/pending\//);
    expect(url.searchParams.get('sp')).toBe('cw');
    expect(url.searchParams.get('sr')).toBe('b');
    expect(url.searchParams.get('skoid')).not.toBeNull(); // signed with a user delegation key
    expect(new Date(started.expiresOn).getTime()).toBeGreaterThan(Date.now());

    // Nothing yet: completing is refused and nothing is stored.
    expect(
      (await expectProblem(await json(env.alice, `attachments/${started.attachmentId}/complete`), 409)).code,
    ).toBe('upload_incomplete');
    expect((await put(started.uploadUrl, photo, 'image/jpeg')).status).toBe(201);
    // Write-only, one blob: no read back through it, no other blob written with it.
    expect((await blobCall(started.uploadUrl, 'GET', {})).status).toBe(403);
    const elsewhere = new URL(started.uploadUrl);
    elsewhere.pathname = elsewhere.pathname.replace(started.attachmentId, 'att-other');
    expect((await put(elsewhere.toString(), photo)).status).toBe(403);

    // Another user cannot complete it; its owner can, and gets the checked file.
    await expectProblem(await json(env.bob, `attachments/${started.attachmentId}/complete`), 404);
    const stored = await expectStatus<StoredAttachment>(
      await json(env.alice, `attachments/${started.attachmentId}/complete`),
      201,
    );
    expect(stored).toMatchObject({
      attachmentId: started.attachmentId,
      name: 'trip.jpg',
      mediaType: 'image/jpeg',
    });
    const read = await fetch(`${env.runtime.url}/api/attachments/${stored.attachmentId}`, {
      headers: env.alice.headers(),
    });
    const bytes = Buffer.from(await read.arrayBuffer());
    expect(sha256(bytes)).toBe(stored.sha256);
    expect((await sharp(bytes).metadata()).exif).toBeUndefined();
    expect(bytes.includes('GPS')).toBe(false);
    // The pending blob and its ticket are gone; completing again gives the same file.
    expect((await env.blobNames()).filter((name) => name.startsWith('pending/'))).toEqual([]);
    expect(
      (
        await expectStatus<StoredAttachment>(
          await json(env.alice, `attachments/${started.attachmentId}/complete`),
          200,
        )
      ).attachmentId,
    ).toBe(stored.attachmentId);

    // It can be sent with a message like any other file.
    const sessionId = await env.alice.startSession();
    await expectStatus(
      await env.alice.post({
        sessionId,
        chatMessageId: randomUUID(),
        text: 'Where?',
        attachments: [stored.attachmentId],
      }),
      202,
    );
    await settle(env.runtime);
  });

  it('takes a directly uploaded file named in a useChat file part', async () => {
    const text = Buffer.from('Meeting notes: the launch moves to Friday.');
    const started = await start(env.alice, 'notes.txt', 'text/plain', text.length);
    expect((await put(started.uploadUrl, text, 'text/plain')).status).toBe(201);
    const stored = await expectStatus<StoredAttachment>(
      await json(env.alice, `attachments/${started.attachmentId}/complete`),
      201,
    );
    const chatId = 'UiDirect00000001';
    const response = await json(env.alice, 'ui/chat', {
      id: chatId,
      trigger: 'submit-message',
      messages: [
        {
          id: 'UiDirectMsg00001',
          role: 'user',
          parts: [
            { type: 'text', text: 'When is the launch?' },
            {
              type: 'file',
              mediaType: 'text/plain',
              filename: 'notes.txt',
              url: `/api/attachments/${stored.attachmentId}`,
            },
          ],
        },
      ],
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.text()).toContain('[DONE]');
    await settle(env.runtime);
    const conversation = await expectStatus<{ messages: { role: string; attachments?: { id: string }[] }[] }>(
      await fetch(`${env.runtime.url}/api/history/conversations/${chatId}`, { headers: env.alice.headers() }),
      200,
    );
    expect(conversation.messages.find((message) => message.role === 'user')?.attachments).toEqual([
      expect.objectContaining({ id: stored.attachmentId, name: 'notes.txt' }),
    ]);
    // Another user's id in a part is not theirs to attach.
    const stolen = await json(env.bob, 'ui/chat', {
      id: 'UiDirect00000002',
      trigger: 'submit-message',
      messages: [
        {
          id: 'UiDirectMsg00002',
          role: 'user',
          parts: [
            { type: 'text', text: 'mine now' },
            { type: 'file', mediaType: 'text/plain', url: `/api/attachments/${stored.attachmentId}` },
          ],
        },
      ],
    });
    expect(stolen.status).toBe(404);
  });

  it('refuses a bad upload by the rule it breaks and deletes it', async () => {
    const html = Buffer.from('<!doctype html><script>alert(1)</script>');
    const started = await start(env.alice, 'cat.png', 'image/png', html.length);
    expect((await put(started.uploadUrl, html, 'image/png')).status).toBe(201);
    const refused = await expectProblem(
      await json(env.alice, `attachments/${started.attachmentId}/complete`),
      415,
    );
    expect(refused.code).toBe('attachment_type');
    expect((await env.blobNames()).some((name) => name.includes(started.attachmentId))).toBe(false);

    const big = await expectProblem(
      await json(env.alice, 'attachments/uploads', {
        filename: 'huge.bin',
        size: env.runtime.config.attachments.maxFileBytes + 1,
      }),
      413,
    );
    expect(big.code).toBe('attachment_too_large');
  });

  it("lets the page's origin upload (CORS) and no other, and only with the signed URL", async () => {
    const started = await start(env.alice, 'a.txt', 'text/plain', 1);
    const preflight = (origin: string) =>
      blobCall(started.uploadUrl, 'OPTIONS', {
        origin,
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'content-type,x-ms-blob-type',
      });
    const page = await preflight(env.runtime.url);
    expect(page.status).toBe(200);
    expect(page.headers['access-control-allow-origin']).toBe(env.runtime.url);
    expect((await preflight('https://elsewhere.example')).status).toBe(403);
    // The runtime forwards signed URLs only: nobody borrows its own access to the emulator.
    const unsigned = new URL(started.uploadUrl);
    unsigned.search = '';
    expect((await put(unsigned.href, Buffer.from('x'))).status).toBe(403);
  });

  it('sweeps an upload never completed and a file never attached, and keeps attached ones', async () => {
    const started = await start(env.alice, 'late.txt', 'text/plain', 5);
    expect((await put(started.uploadUrl, Buffer.from('late!'))).status).toBe(201);
    const loose = await expectStatus<StoredAttachment>(
      await json(env.alice, 'attachments', {
        name: 'loose.txt',
        contentBase64: Buffer.from('loose').toString('base64'),
      }),
      201,
    );
    // Something else that shares the container (a data archive) is not the sweep's.
    const container = env.runtime.blob
      .serviceClient()
      .getContainerClient(env.runtime.config.attachments.blob?.container ?? '');
    await container.getBlockBlobClient('exports/other.tar.gz').uploadData(Buffer.from('archive'));
    // The timer runs as it would on its schedule: nothing is old enough yet.
    await env.runtime.runTimer('sweepAttachments');
    expect((await env.blobNames()).some((name) => name.includes(started.attachmentId))).toBe(true);

    // A day later, everything not attached to a message is gone; what messages carry stays.
    const attached = (await env.blobNames()).filter((name) => !name.startsWith('pending/'));
    const later = new Date(Date.now() + (env.runtime.config.attachments.unattachedHours + 1) * 3_600_000);
    const swept = await sweepAttachments(env.runtime.app.attachments, later);
    expect(swept.uploads).toBeGreaterThanOrEqual(1);
    expect(swept.unattached).toBeGreaterThanOrEqual(1);
    const after = await env.blobNames();
    expect(after.some((name) => name.includes(started.attachmentId))).toBe(false);
    expect(after.some((name) => name.endsWith(loose.attachmentId))).toBe(false);
    expect(after).toContain('exports/other.tar.gz');
    await container.deleteBlob('exports/other.tar.gz');
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((name) => attached.includes(name))).toBe(true);
    await expectProblem(await json(env.alice, `attachments/${started.attachmentId}/complete`), 404);
  });

  it("deletes an upload under way with all of its user's data", async () => {
    const carol = new ChatClient(env.runtime.url, 'user_003');
    const started = await start(carol, 'draft.txt', 'text/plain', 5);
    expect((await put(started.uploadUrl, Buffer.from('draft'))).status).toBe(201);
    expect((await env.blobNames()).some((name) => name.includes(started.attachmentId))).toBe(true);
    const erased = await fetch(`${env.runtime.url}/api/account/users/user_003/data`, {
      method: 'DELETE',
      headers: carol.headers(),
    });
    expect(erased.status).toBe(204);
    expect((await env.blobNames()).some((name) => name.includes(started.attachmentId))).toBe(false);
  });

  it('keeps the same bytes sent again once, and counts them once', async () => {
    const usage = async () =>
      (
        await expectStatus<{ storage: { attachmentBytes: number } }>(
          await fetch(`${env.runtime.url}/api/usage/users/user_002`, { headers: env.bob.headers() }),
          200,
        )
      ).storage.attachmentBytes;
    const png = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#3a3' } })
      .png()
      .toBuffer();
    const body = { name: 'same.png', contentBase64: png.toString('base64') };
    const first = await expectStatus<StoredAttachment>(await json(env.bob, 'attachments', body), 201);
    const used = await usage();
    expect(used).toBe(first.size);
    const second = await expectStatus<StoredAttachment>(await json(env.bob, 'attachments', body), 200);
    expect(second.attachmentId).toBe(first.attachmentId);
    // Through a direct upload too.
    const started = await start(env.bob, 'same.png', 'image/png', png.length);
    expect((await put(started.uploadUrl, png, 'image/png')).status).toBe(201);
    const third = await expectStatus<StoredAttachment>(
      await json(env.bob, `attachments/${started.attachmentId}/complete`),
      200,
    );
    expect(third.attachmentId).toBe(first.attachmentId);
    expect(await usage()).toBe(used);

    // Once a conversation carries it, the same bytes sent for another one are a file of their own (deleting that
    // conversation deletes its files).
    const sessionId = await env.bob.startSession();
    await expectStatus(
      await env.bob.post({
        sessionId,
        chatMessageId: randomUUID(),
        text: 'look',
        attachments: [first.attachmentId],
      }),
      202,
    );
    await settle(env.runtime);
    const fourth = await expectStatus<StoredAttachment>(await json(env.bob, 'attachments', body), 201);
    expect(fourth.attachmentId).not.toBe(first.attachmentId);
  });
});
