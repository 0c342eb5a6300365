// How a prompt's files reach the model: recent images as their bytes, older ones as a caption, text within its
// budget, and messages without files untouched.
import { describe, expect, it } from 'vitest';
import { MemoryAttachments } from '../../test/support/in-memory-attachments.js';
import type { ChatMessage } from '../llm/llm-gateway.js';
import type { MessageAttachment } from '../message-attachments.js';
import { estimateTokens, imageTokens, messageTokens } from '../conversation/tokens.js';
import { withAttachments } from './model-attachments.js';

const image = (n: number): MessageAttachment => ({
  id: `att-${String(n).padStart(32, '0')}`,
  name: `${n}.png`,
  mediaType: 'image/png',
  size: 3,
  width: 2,
  height: 1,
});

async function storeWith(files: { attachment: MessageAttachment; bytes: Buffer }[]) {
  const store = new MemoryAttachments();
  for (const { attachment, bytes } of files) await store.put('u', { ...attachment, sha256: '' }, bytes);
  return store;
}

describe('a prompt with files', () => {
  it('sends the images of the last ATTACHMENTS_IMAGE_TURNS user messages, and a caption for older ones', async () => {
    const store = await storeWith(
      [1, 2].map((n) => ({ attachment: image(n), bytes: Buffer.from([n, n, n]) })),
    );
    const messages: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'first', attachments: [image(1)] },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'second', attachments: [image(2)] },
    ];
    const read = await withAttachments({ store, config: { imageTurns: 1, textTokens: 100 } }, 'u', messages);
    expect(read[0]).toBe(messages[0]);
    expect(read[1]).toEqual({
      role: 'user',
      content: "first\n\n[Image '1.png' (image/png, 2×1) was attached here; it is no longer shown.]",
    });
    expect(read[3]).toEqual({
      role: 'user',
      content: 'second',
      images: [{ mediaType: 'image/png', data: Buffer.from([2, 2, 2]).toString('base64') }],
    });
    // Another user's prompt names the same ids and finds nothing of them.
    const other = await withAttachments({ store, config: { imageTurns: 1, textTokens: 100 } }, 'v', messages);
    expect(other[3]).toMatchObject({ content: expect.stringContaining('has since been deleted') });
  });

  it('puts a text file into the prompt within the token budget, and says when it was cut', async () => {
    const notes: MessageAttachment = {
      id: `att-${'a'.repeat(32)}`,
      name: 'n.md',
      mediaType: 'text/markdown',
      size: 40,
    };
    const store = await storeWith([{ attachment: notes, bytes: Buffer.from('x'.repeat(40)) }]);
    const [message] = await withAttachments({ store, config: { imageTurns: 4, textTokens: 5 } }, 'u', [
      { role: 'user', content: 'read', attachments: [notes] },
    ]);
    expect(message?.content).toBe(
      `read\n\n<attachment name="n.md" type="text/markdown">\n${'x'.repeat(20)}\n[The rest of this file was cut to fit the prompt.]\n</attachment>`,
    );
  });
});

describe("a prompt's estimate of its files", () => {
  it('never falls short of the message the model gets: images by pixels or caption, text within its budget', async () => {
    const photo: MessageAttachment = { ...image(3), width: 1600, height: 1200 };
    const text = (n: number, bytes: number): MessageAttachment => ({
      id: `att-${String(n).padStart(32, '7')}`,
      name: `${n}.txt`,
      mediaType: 'text/plain',
      size: bytes,
    });
    const short = text(1, 30);
    const long = text(2, 900);
    const store = await storeWith([
      { attachment: photo, bytes: Buffer.from([1]) },
      { attachment: short, bytes: Buffer.from('s'.repeat(30)) },
      { attachment: long, bytes: Buffer.from('l'.repeat(900)) },
    ]);
    const config = { imageTurns: 1, textTokens: 50 };
    const messages: ChatMessage[] = [
      { role: 'user', content: 'old', attachments: [photo, short] },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'new', attachments: [photo, long, short] },
    ];
    const read = await withAttachments({ store, config }, 'u', messages);
    const sent = (message: ChatMessage) =>
      estimateTokens(message.content) +
      4 +
      (message.role === 'user' ? (message.images?.length ?? 0) : 0) * imageTokens(1600, 1200);
    const [oldSent, , newSent] = read.map(sent);
    expect(messageTokens(messages[0]!, { imageShown: false, textTokens: 50 })).toBeGreaterThanOrEqual(
      oldSent!,
    );
    expect(messageTokens(messages[2]!, { imageShown: true, textTokens: 50 })).toBeGreaterThanOrEqual(
      newSent!,
    );
    // Close, too: the image is counted once, and the long file at its budget, not its size.
    expect(messageTokens(messages[2]!, { imageShown: true, textTokens: 50 })).toBeLessThan(newSent! + 100);
  });
});
