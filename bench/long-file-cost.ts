// What searching a long text file by its embeddings costs a turn (offline model): the first token of the turn that
// embeds its passages and of the next, which reads them back, and the bytes kept. Prints figures, asserts nothing.
// npx tsx bench/long-file-cost.ts  (RUNS=6, PARAGRAPHS=1200 by default)
import { randomUUID } from 'node:crypto';
import type { LocalRuntime } from '../local/runtime.js';
import { firstToken, startInstantRuntime, upload } from './instant-runtime.js';
import { ChatApi } from './chat-clients.js';
import { percentiles } from './figures.js';

const RUNS = Number(process.env.RUNS ?? 6);
const PARAGRAPHS = Number(process.env.PARAGRAPHS ?? 1200);
const QUESTION = 'What is the vault code?';

/** A fresh long file each run (new bytes are a new file, embedded anew), its answer in the middle. */
function longText(run: number): string {
  const paragraphs = Array.from(
    { length: PARAGRAPHS },
    (_, i) => `Run ${run}, paragraph ${i}: the river ran past mill number ${i} on a mild and quiet morning.`,
  );
  paragraphs[Math.floor(PARAGRAPHS / 2)] = 'The vault code is 7319, kept by the night porter.';
  return paragraphs.join('\n\n');
}

/** The kept embeddings of a file: how many passages, and the blob's bytes. */
async function keptVectors(runtime: LocalRuntime, attachmentId: string) {
  const container = runtime.blob
    .serviceClient()
    .getContainerClient(runtime.config.attachments.blob?.container ?? '');
  for await (const item of container.listBlobsFlat()) {
    if (!item.name.includes(`${attachmentId}.passages-`)) continue;
    const bytes = await container.getBlockBlobClient(item.name).downloadToBuffer();
    return { passages: bytes.readUInt32LE(0), dimensions: bytes.readUInt32LE(4), bytes: bytes.length };
  }
  return undefined;
}

async function main(): Promise<void> {
  const runtime = await startInstantRuntime();
  try {
    const api = new ChatApi(runtime.url);
    const userId = `bench-long-${randomUUID().slice(0, 8)}`;
    const first: number[] = [];
    const second: number[] = [];
    let kept: Awaited<ReturnType<typeof keptVectors>>;
    let characters = 0;
    // One warm-up conversation (the Blob client, the chunker, the model's first calls), then the measured ones.
    for (let run = -1; run < RUNS; run++) {
      const text = longText(run);
      characters = text.length;
      const { attachmentId } = await upload(runtime, userId, 'ledger.txt', 'text/plain', Buffer.from(text));
      const sessionId = await api.startSession(userId);
      const opening = await firstToken(runtime, api, {
        userId,
        sessionId,
        text: QUESTION,
        attachments: [attachmentId],
      });
      const next = await firstToken(runtime, api, { userId, sessionId, text: QUESTION, attachments: [] });
      if (run < 0) continue;
      first.push(opening);
      second.push(next);
      kept = await keptVectors(runtime, attachmentId);
    }
    const figures = {
      runs: RUNS,
      fileCharacters: characters,
      keptEmbeddings: kept,
      firstTokenMs: { embeddingPassages: percentiles(first), readingThemBack: percentiles(second) },
    };
    console.log(JSON.stringify(figures, null, 2));
  } finally {
    await runtime.stop();
  }
}

main().catch((error: unknown) => {
  // A bench reports; it never fails a build.
  console.error('long-file-cost could not finish:', error);
});
