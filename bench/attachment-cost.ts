// What an image costs a turn on the local runtime: the time a 1 MB photo adds to a new conversation's first token
// (turns with and without it, alternated), and per image the bytes sent, the blobs stored and its prompt tokens.
// Prints figures and asserts nothing about speed.  npm run bench:attachments  (RUNS=12 by default)
import { randomBytes, randomUUID } from 'node:crypto';
import sharp from 'sharp';
import type { LocalRuntime } from '../local/runtime.js';
import { firstToken, startInstantRuntime, upload } from './instant-runtime.js';
import { imageTokens } from '../shared/conversation/tokens.js';
import { ChatApi } from './chat-clients.js';
import { mean, percentiles, round } from './figures.js';

const RUNS = Number(process.env.RUNS ?? 12);

/** Photo-like pixels: noise over a gradient compresses as little as a real photo does. */
function photoPixels(width: number, height: number): Buffer {
  const pixels = Buffer.alloc(width * height * 3);
  const noise = randomBytes(pixels.length);
  for (let i = 0; i < pixels.length; i++) pixels[i] = ((i % (width * 3)) / 12 + (noise[i] ?? 0) / 3) & 0xff;
  return pixels;
}

/** A photo as a JPEG: at 1600 × 1200 about 1 MB. */
function photo(width = 1600, height = 1200): Promise<Buffer> {
  return sharp(photoPixels(width, height), { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 88 })
    .toBuffer();
}

/** The same kind of picture kept losslessly. */
function losslessPhoto(width = 1600, height = 1200): Promise<Buffer> {
  return sharp(photoPixels(width, height), { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/** The blobs Blob Storage keeps of one attachment (every name that carries its id), and their bytes. */
async function storedBlobs(runtime: LocalRuntime, attachmentId: string) {
  const container = runtime.blob
    .serviceClient()
    .getContainerClient(runtime.config.attachments.blob?.container ?? '');
  let blobs = 0;
  let bytes = 0;
  for await (const item of container.listBlobsFlat()) {
    if (!item.name.includes(attachmentId)) continue;
    blobs++;
    bytes += item.properties.contentLength ?? 0;
  }
  return { blobs, bytes };
}

/** One new conversation's first turn, with the attachment if one is given. */
async function firstTurn(runtime: LocalRuntime, api: ChatApi, userId: string, attachmentId?: string) {
  const sessionId = await api.startSession(userId);
  const attachments = attachmentId === undefined ? [] : [attachmentId];
  return firstToken(runtime, api, { userId, sessionId, text: 'What is in this picture?', attachments });
}

async function main(): Promise<void> {
  const runtime = await startInstantRuntime();
  try {
    const api = new ChatApi(runtime.url);
    const jpeg = await photo();
    const userId = `bench-attach-${randomUUID().slice(0, 8)}`;
    const uploads: number[] = [];
    const storedJpeg: number[] = [];
    const withImage: number[] = [];
    const without: number[] = [];
    // Warm both paths once (the encoder, the Blob client, the model's first call), then alternate.
    await firstTurn(runtime, api, userId);
    await firstTurn(
      runtime,
      api,
      userId,
      (await upload(runtime, userId, 'warm.jpg', 'image/jpeg', jpeg)).attachmentId,
    );
    for (let run = 0; run < RUNS; run++) {
      // A fresh photo each run: the same bytes sent again would be the stored file, not a new upload.
      const bytes = await photo();
      const began = performance.now();
      const stored = await upload(runtime, userId, `photo-${run}.jpg`, 'image/jpeg', bytes);
      uploads.push(performance.now() - began);
      storedJpeg.push(stored.size / bytes.length);
      without.push(await firstTurn(runtime, api, userId));
      withImage.push(await firstTurn(runtime, api, userId, stored.attachmentId));
    }
    // Bytes kept per image: a 1 MB photo, a phone's 12-megapixel photo (scaled to ATTACHMENTS_MAX_IMAGE_EDGE) and
    // a lossless PNG of the 1 MB photo's size.
    const samples: [string, string, Buffer][] = [
      ['jpeg 1600x1200', 'image/jpeg', jpeg],
      ['jpeg 4032x3024', 'image/jpeg', await photo(4032, 3024)],
      ['png 1600x1200', 'image/png', await losslessPhoto()],
    ];
    const bytesPerImage: Record<string, object> = {};
    for (const [label, type, bytes] of samples) {
      const stored = await upload(runtime, userId, `${label}.img`, type, bytes);
      const kept = await storedBlobs(runtime, stored.attachmentId);
      bytesPerImage[label] = {
        sent: bytes.length,
        stored: stored.size,
        blobs: kept.blobs,
        blobBytes: kept.bytes,
        storedOverSent: round(kept.bytes / bytes.length, 3),
        storedSize: `${stored.width}x${stored.height}`,
        promptTokens:
          stored.width === undefined || stored.height === undefined
            ? undefined
            : imageTokens(stored.width, stored.height),
      };
    }
    const figures = {
      runs: RUNS,
      firstTokenMs: { withoutImage: percentiles(without), withImage: percentiles(withImage) },
      // Each run's pair (the same moment's load), then their median.
      addedByImageMs: percentiles(withImage.map((ms, i) => ms - (without[i] ?? Number.NaN))).p50,
      uploadMs: percentiles(uploads),
      storedOverSentJpegMean: round(mean(storedJpeg), 3),
      bytesPerImage,
    };
    console.log(JSON.stringify(figures, null, 2));
  } finally {
    await runtime.stop();
  }
}

main().catch((error: unknown) => {
  // A bench reports; it never fails a build.
  console.error('bench:attachments could not finish:', error);
});
