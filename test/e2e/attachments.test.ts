// Attachments end to end over Azurite: an image uploaded, read back by its owner only, sent with a message and
// received by a scripted model (over the real Chat Completions wire) as exactly the stored bytes; each refusal
// naming its rule with nothing stored; EXIF GPS gone; the blobs gone with their conversation.
import { randomUUID } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { expectStatus, type ChatClient } from '../support/chat-client.js';
import {
  expectProblem,
  imageUrlsOf,
  sha256,
  useAttachmentRuntime,
  type StoredAttachment,
} from '../support/attachment-runtime.js';
import { settle } from '../support/local-runtime.js';

/** A PNG whose header claims width × height, with almost no data: decoding it would take gigabytes. */
function claimedPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    return Buffer.concat([length, Buffer.from(type, 'ascii'), data, Buffer.alloc(4)]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(4096))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('attachments over Azurite', { timeout: 120_000 }, () => {
  const env = useAttachmentRuntime({
    script: (request) => ({
      content: request.stream === true ? `I see ${imageUrlsOf(request).length} image(s).` : '{}',
    }),
  });

  const upload = async (client: ChatClient, name: string, type: string, bytes: Uint8Array) => {
    const form = new FormData();
    form.append('file', new Blob([bytes], { type }), name);
    return fetch(`${env.runtime.url}/api/attachments`, {
      method: 'POST',
      headers: client.headers(),
      body: form,
    });
  };
  it("sends an uploaded image to the model as exactly its stored bytes; another user's read is a 404", async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#0a6' } })
      .png()
      .toBuffer();
    const stored = await expectStatus<StoredAttachment>(
      await upload(env.alice, 'chart.png', 'image/png', png),
      201,
    );
    expect(stored).toMatchObject({ name: 'chart.png', mediaType: 'image/png', width: 64, height: 48 });
    expect(stored.attachmentId).toMatch(/^att-[0-9a-f]{32}$/);

    const own = await env.read(env.alice, stored.attachmentId);
    expect(own.status).toBe(200);
    expect(own.headers.get('content-type')).toBe('image/png');
    expect(own.headers.get('x-content-type-options')).toBe('nosniff');
    const bytes = new Uint8Array(await own.arrayBuffer());
    expect(bytes.length).toBe(stored.size);
    expect(sha256(bytes)).toBe(stored.sha256);
    await expectProblem(await env.read(env.bob, stored.attachmentId), 404);

    const sessionId = await env.alice.startSession();
    const chatMessageId = randomUUID();
    await expectStatus(
      await env.alice.post({
        sessionId,
        chatMessageId,
        text: 'What is in this chart?',
        attachments: [stored.attachmentId],
      }),
      202,
    );
    const frames = await env.alice.stream(sessionId, chatMessageId);
    expect(frames.map((frame) => frame.event)).toContain('message-end');
    const sent = env.model.requests.filter((request) => request.stream === true).at(-1);
    const urls = sent === undefined ? [] : imageUrlsOf(sent);
    expect(urls).toHaveLength(1);
    expect(urls[0]).toBe(`data:image/png;base64,${Buffer.from(bytes).toString('base64')}`);

    // History keeps what the message carried (never a URL), and the next turn sends the same bytes again.
    await settle(env.runtime);
    const conversation = await expectStatus<{ messages: { role: string; attachments?: unknown[] }[] }>(
      await fetch(`${env.runtime.url}/api/history/conversations/${sessionId}`, {
        headers: env.alice.headers(),
      }),
      200,
    );
    expect(conversation.messages.find((message) => message.role === 'user')?.attachments).toEqual([
      {
        id: stored.attachmentId,
        name: 'chart.png',
        mediaType: 'image/png',
        size: stored.size,
        width: 64,
        height: 48,
      },
    ]);

    // A regenerated answer sees the same image, as the same bytes (the prompt's prefix stays the same).
    const again = randomUUID();
    await expectStatus(
      await fetch(`${env.runtime.url}/api/chat/${sessionId}/${chatMessageId}/regenerate`, {
        method: 'POST',
        headers: env.alice.headers({ 'content-type': 'application/json' }),
        body: JSON.stringify({ chatMessageId: again }),
      }),
      202,
    );
    expect((await env.alice.stream(sessionId, again)).map((frame) => frame.event)).toContain('message-end');
    const resent = env.model.requests.filter((request) => request.stream === true).at(-1);
    expect(resent === undefined ? [] : imageUrlsOf(resent)).toEqual(urls);

    // Deleting the conversation deletes its blob; another conversation's stay.
    const kept = await expectStatus<StoredAttachment>(
      await upload(env.alice, 'notes.txt', 'text/plain', Buffer.from('hi')),
      201,
    );
    const before = await env.blobNames();
    expect(before.some((name) => name.endsWith(stored.attachmentId))).toBe(true);
    const deleted = await fetch(`${env.runtime.url}/api/history/conversations/${sessionId}`, {
      method: 'DELETE',
      headers: env.alice.headers(),
    });
    expect(deleted.status).toBe(204);
    await settle(env.runtime);
    const after = await env.blobNames();
    expect(after.some((name) => name.endsWith(stored.attachmentId))).toBe(false);
    expect(after.some((name) => name.endsWith(kept.attachmentId))).toBe(true);
    await expectProblem(await env.read(env.alice, stored.attachmentId), 404);
  });

  it('takes an image in a useChat file part, and the model receives exactly the stored bytes', async () => {
    const png = await sharp({ create: { width: 32, height: 32, channels: 4, background: '#fc0a' } })
      .png()
      .toBuffer();
    const chatId = 'UiChat0000000001';
    const response = await fetch(`${env.runtime.url}/api/ui/chat`, {
      method: 'POST',
      headers: env.alice.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({
        id: chatId,
        trigger: 'submit-message',
        messages: [
          {
            id: 'UiMsg00000000001',
            role: 'user',
            parts: [
              { type: 'text', text: 'What colour is this?' },
              {
                type: 'file',
                mediaType: 'image/png',
                filename: 'swatch.png',
                url: `data:image/png;base64,${png.toString('base64')}`,
              },
            ],
          },
        ],
      }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('[DONE]');
    await settle(env.runtime);
    const conversation = await expectStatus<{ messages: { role: string; attachments?: { id: string }[] }[] }>(
      await fetch(`${env.runtime.url}/api/history/conversations/${chatId}`, { headers: env.alice.headers() }),
      200,
    );
    const attached = conversation.messages.find((message) => message.role === 'user')?.attachments ?? [];
    expect(attached).toHaveLength(1);
    const stored = Buffer.from(await (await env.read(env.alice, attached[0]?.id ?? '')).arrayBuffer());
    const sent = env.model.requests.filter((request) => request.stream === true).at(-1);
    expect(sent === undefined ? [] : imageUrlsOf(sent)).toEqual([
      `data:image/png;base64,${stored.toString('base64')}`,
    ]);
  });

  it('refuses a .png holding HTML, a 30,000 × 30,000 PNG and an 11th image, storing nothing of them', async () => {
    const before = await env.blobNames();
    const html = await expectProblem(
      await upload(
        env.alice,
        'cat.png',
        'image/png',
        Buffer.from('<!doctype html><script>alert(1)</script>'),
      ),
      415,
    );
    expect(html.code).toBe('attachment_type');
    const bomb = await expectProblem(
      await upload(env.alice, 'bomb.png', 'image/png', claimedPng(30_000, 30_000)),
      413,
    );
    expect(bomb.code).toBe('attachment_pixels');
    expect(await env.blobNames()).toEqual(before);

    // Eleven different images: the same bytes sent again would be one file.
    const ids: string[] = [];
    for (let i = 0; i < 11; i++) {
      const dot = await sharp({
        create: { width: 8, height: 8, channels: 3, background: { r: i, g: 0, b: 0 } },
      })
        .png()
        .toBuffer();
      ids.push(
        (await expectStatus<StoredAttachment>(await upload(env.alice, `${i}.png`, 'image/png', dot), 201))
          .attachmentId,
      );
    }
    const sessionId = await env.alice.startSession();
    const eleven = await expectProblem(
      await env.alice.post({ sessionId, chatMessageId: randomUUID(), text: 'eleven', attachments: ids }),
      400,
    );
    expect(eleven.code).toBe('attachments_per_message');
  });

  it('searches a text file too long for the prompt: the passage that answers reaches the model', async () => {
    const paragraphs = Array.from(
      { length: 1200 },
      (_, i) => `Paragraph ${i}: the river ran past mill number ${i} on a mild and quiet morning.`,
    );
    paragraphs[600] = 'The vault code is 7319, kept by the night porter.';
    const text = paragraphs.join('\n\n');
    // Longer than ATTACHMENTS_TEXT_TOKENS lets into the prompt, its answer in the middle.
    expect(text.length).toBeGreaterThan(env.runtime.config.attachments.textTokens * 4 * 1.5);
    const stored = await expectStatus<StoredAttachment>(
      await upload(env.alice, 'ledger.txt', 'text/plain', Buffer.from(text)),
      201,
    );
    const sessionId = await env.alice.startSession();
    const chatMessageId = randomUUID();
    await expectStatus(
      await env.alice.post({
        sessionId,
        chatMessageId,
        text: 'What is the vault code?',
        attachments: [stored.attachmentId],
      }),
      202,
    );
    expect((await env.alice.stream(sessionId, chatMessageId)).map((frame) => frame.event)).toContain(
      'message-end',
    );
    const sent = env.model.requests.filter((request) => request.stream === true).at(-1);
    const prompt = sent?.messages.findLast((message) => message.role === 'user')?.content;
    expect(typeof prompt).toBe('string');
    expect(prompt).toContain('The vault code is 7319');
    expect(prompt).toContain('passages that best match the question');
    // Not the whole file: what is kept stays within the budget.
    expect((prompt as string).length).toBeLessThan(env.runtime.config.attachments.textTokens * 4 + 1_000);
    await settle(env.runtime);
  });

  it('strips EXIF, GPS included, from a stored JPEG', async () => {
    const photo = await sharp({ create: { width: 120, height: 80, channels: 3, background: '#48c' } })
      .jpeg()
      .withExif({
        IFD0: { Make: 'PhoneMaker' },
        IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1' },
      })
      .toBuffer();
    expect((await sharp(photo).metadata()).exif).toBeDefined();
    const stored = await expectStatus<StoredAttachment>(
      await upload(env.alice, 'trip.jpg', 'image/jpeg', photo),
      201,
    );
    const bytes = Buffer.from(await (await env.read(env.alice, stored.attachmentId)).arrayBuffer());
    expect((await sharp(bytes).metadata()).exif).toBeUndefined();
    expect(bytes.includes('PhoneMaker')).toBe(false);
    expect(bytes.includes('GPS')).toBe(false);
  });
});
