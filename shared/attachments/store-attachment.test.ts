// A file's checks on the way in, over the real image encoder (sharp) and an in-memory store: the type from the
// bytes, the pixel bound before decoding, EXIF gone, and nothing stored on a refusal.
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { QuotaExceededError } from '../errors.js';
import { sharpImages } from './adapters/sharp-images.js';
import { MemoryAttachments } from '../../test/support/in-memory-attachments.js';
import { MemoryQuotaState } from '../../test/support/in-memory-quota.js';
import { attachToMessage } from './attach-to-message.js';
import { AttachmentRefusedError } from './errors.js';
import { attachmentConfig, attachmentSettings } from './settings.js';
import { readSettings, SettingProblems, settingsOf } from '../settings/setting.js';
import { sniffType } from './sniff.js';
import { storeAttachment, type AttachmentServices, type ImageEncoder } from './store-attachment.js';

function config(env: Record<string, string> = {}) {
  const problems = new SettingProblems(settingsOf(attachmentSettings));
  const values = readSettings(
    attachmentSettings,
    { ATTACHMENTS_BLOB_ENDPOINT: 'http://127.0.0.1:1/a', ...env },
    problems,
  );
  problems.throwIfAny();
  return attachmentConfig(values);
}

const never: ImageEncoder = {
  reencode: () => Promise.reject(new Error('the image was decoded')),
};

function services(env: Record<string, string> = {}, images: ImageEncoder = sharpImages) {
  const store = new MemoryAttachments();
  const quota = { exempt: { users: [], groups: [] } } as unknown as AttachmentServices['quota'];
  return { store, images, config: config(env), quota } satisfies AttachmentServices;
}

const caller = { userId: 'user_001' };

/** A PNG whose header says width × height, with no image data behind it: decoding it would need gigabytes. */
function pngHeader(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    return Buffer.concat([length, Buffer.from(type, 'ascii'), data, Buffer.alloc(4)]);
  };
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(1024))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A red PNG; a shade of it differs in its bytes (the same bytes sent again are one file). */
const redPng = (shade = 0) =>
  sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 200, g: shade, b: 0 } } })
    .png()
    .toBuffer();

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('the file was accepted'),
    (error: unknown) => error,
  );
}

describe('a file on its way in', () => {
  it('sniffs the type from the bytes, never from the name', async () => {
    expect(sniffType(await redPng())).toEqual({ mediaType: 'image/png', width: 40, height: 30 });
    expect(sniffType(Buffer.from('<!DOCTYPE html><script>alert(1)</script>'), 'image/png').mediaType).toBe(
      'text/html',
    );
    expect(sniffType(Buffer.from('a,b\n1,2\n'), 'text/csv').mediaType).toBe('text/csv');
    expect(sniffType(Buffer.from('%PDF-1.7\n')).mediaType).toBe('application/pdf');
    expect(sniffType(Buffer.from([0, 1, 2, 3])).mediaType).toBe('application/octet-stream');
  });

  it('refuses a .png holding HTML by its type, and stores nothing', async () => {
    const s = services();
    const error = await rejection(
      storeAttachment(s, caller, {
        name: 'cat.png',
        declaredType: 'image/png',
        bytes: Buffer.from('<html><body><script>fetch("/api")</script></body></html>'),
      }),
    );
    expect(error).toBeInstanceOf(AttachmentRefusedError);
    expect((error as AttachmentRefusedError).code).toBe('attachment_type');
    expect((error as AttachmentRefusedError).status).toBe(415);
    expect(s.store.files.size).toBe(0);
  });

  it('refuses a 30,000 × 30,000 PNG from its header, without decoding it', async () => {
    const s = services({}, never);
    const bytes = pngHeader(30_000, 30_000);
    expect(bytes.length).toBeLessThan(2_000);
    const error = await rejection(storeAttachment(s, caller, { name: 'bomb.png', bytes }));
    expect((error as AttachmentRefusedError).code).toBe('attachment_pixels');
    expect((error as AttachmentRefusedError).message).toContain('30000 × 30000');
    expect(s.store.files.size).toBe(0);
  });

  it('strips EXIF (GPS included) by re-encoding, and scales to the longest edge', async () => {
    const gps = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#08f' } })
      .jpeg()
      .withExif({
        IFD0: { Make: 'PhoneMaker' },
        IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1' },
      })
      .toBuffer();
    expect((await sharp(gps).metadata()).exif).toBeDefined();
    expect(gps.includes('PhoneMaker')).toBe(true);
    const s = services({ ATTACHMENTS_MAX_IMAGE_EDGE: '150' });
    const stored = await storeAttachment(s, caller, { name: 'trip.jpg', bytes: gps });
    const bytes = s.store.files.get(`user_001/${stored.id}`)?.bytes ?? Buffer.alloc(0);
    const metadata = await sharp(bytes).metadata();
    expect(metadata.exif).toBeUndefined();
    expect(Buffer.from(bytes).includes('PhoneMaker')).toBe(false);
    expect(stored).toMatchObject({ mediaType: 'image/jpeg', width: 150, height: 100, size: bytes.length });
  });

  it('lets only one of two parallel uploads pass the quota, and frees the reservation once a file is stored', async () => {
    const leases = new MemoryQuotaState();
    const base = services({ QUOTA_ATTACHMENT_BYTES: '15' });
    const quota = {
      ...base,
      quota: { ...base.quota, leaseSeconds: 60 },
      leases,
    } satisfies AttachmentServices;
    const upload = (name: string) =>
      storeAttachment(quota, caller, { name, bytes: Buffer.from(name.slice(0, 1).repeat(10)) });
    const outcomes = await Promise.allSettled(
      [upload('a.txt'), upload('b.txt')].map((p) => p.then(() => 'ok')),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(refused?.reason).toBeInstanceOf(QuotaExceededError);
    expect(quota.store.files.size).toBe(1);
    // The stored file is counted by the store, no longer by a reservation: a file that fits is taken.
    expect(leases.leases.get(caller.userId) ?? []).toEqual([]);
    await storeAttachment(quota, caller, { name: 'c.txt', bytes: Buffer.from('c'.repeat(4)) });
    expect(quota.store.files.size).toBe(2);
  });

  it('refuses a file past the size limit, and one past the quota', async () => {
    const small = services({ ATTACHMENTS_MAX_FILE_BYTES: '10' });
    const big = await rejection(
      storeAttachment(small, caller, { name: 'a.txt', bytes: Buffer.from('x'.repeat(11)) }),
    );
    expect((big as AttachmentRefusedError).code).toBe('attachment_too_large');
    const quota = services({ QUOTA_ATTACHMENT_BYTES: '15' });
    await storeAttachment(quota, caller, { name: 'a.txt', bytes: Buffer.from('x'.repeat(10)) });
    const over = await rejection(
      storeAttachment(quota, caller, { name: 'b.txt', bytes: Buffer.from('y'.repeat(10)) }),
    );
    expect(over).toBeInstanceOf(QuotaExceededError);
    expect(quota.store.files.size).toBe(1);
  });

  it("takes at most ATTACHMENTS_MAX_PER_MESSAGE files in a message, and only the caller's own", async () => {
    const s = services();
    const ids: string[] = [];
    for (let i = 0; i < 11; i++)
      ids.push((await storeAttachment(s, caller, { name: `${i}.png`, bytes: await redPng(i) })).id);
    const eleven = await rejection(attachToMessage(s, 'user_001', 'Zx81qWe4Rt7yUi0o', ids));
    expect((eleven as AttachmentRefusedError).code).toBe('attachments_per_message');
    const ten = await attachToMessage(s, 'user_001', 'Zx81qWe4Rt7yUi0o', ids.slice(0, 10));
    expect(ten).toHaveLength(10);
    expect(s.store.files.get(`user_001/${ids[0]}`)?.attachment.sessionId).toBe('Zx81qWe4Rt7yUi0o');
    const other = await rejection(attachToMessage(s, 'user_002', 'Zx81qWe4Rt7yUi0o', ids.slice(0, 1)));
    expect((other as { status: number }).status).toBe(404);
    const blind = services({ LLM_VISION: 'off' });
    const image = await storeAttachment(blind, caller, { name: 'x.png', bytes: await redPng() });
    const refused = await rejection(attachToMessage(blind, 'user_001', 'Zx81qWe4Rt7yUi0o', [image.id]));
    expect((refused as AttachmentRefusedError).code).toBe('model_without_vision');
  });

  it("asks the catalogue's model whether it takes images, only when the message carries one", async () => {
    const s = services({ LLM_VISION: 'off' });
    const image = await storeAttachment(s, caller, { name: 'x.png', bytes: await redPng() });
    const text = await storeAttachment(s, caller, { name: 'notes.txt', bytes: Buffer.from('plain words') });
    const asked: string[] = [];
    const model = (id: string, sees: boolean) => () => {
      asked.push(id);
      return Promise.resolve({ model: id, sees });
    };
    // The listed model's own capability wins over LLM_VISION, either way.
    const blind = await rejection(
      attachToMessage(s, 'user_001', 'Zx81qWe4Rt7yUi0o', [image.id], model('fast', false)),
    );
    expect((blind as AttachmentRefusedError).code).toBe('model_without_vision');
    expect((blind as Error).message).toContain("Model 'fast' does not take images");
    expect(
      await attachToMessage(s, 'user_001', 'Zx81qWe4Rt7yUi0o', [image.id], model('vision', true)),
    ).toHaveLength(1);
    // A message without an image never asks (no read of the conversation's model).
    await attachToMessage(s, 'user_001', 'Zx81qWe4Rt7yUi0o', [text.id], model('text-only', false));
    expect(asked).toEqual(['fast', 'vision']);
  });
});
