// Replaying recorded provider streams (test/fixtures/llm-wire): the fixtures' folder, a scripted fetch that serves
// exact bytes in chosen chunks (honouring the abort signal as undici does), and seeded cuts at arbitrary byte
// offsets, with counts of the cuts that fall inside a UTF-8 character or a `data: ` prefix.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LLM_WIRE_DIR = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/llm-wire');

// ---- a scripted fetch -----------------------------------------------------------------------------

export interface RecordedRequest {
  url: string;
  headers: Headers;
  body: Record<string, unknown>;
}

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** The body's bytes, delivered as these chunks (one per read). */
  chunks: Uint8Array[];
  /** Keep the stream open after the chunks until the request is aborted. */
  hang?: boolean;
}

/** A fetch that answers each call with the next scripted response, honouring the abort signal like undici. */
export function scriptedFetch(responses: ScriptedResponse[]): {
  fetch: typeof fetch;
  requests: RecordedRequest[];
} {
  const requests: RecordedRequest[] = [];
  const fetchFn = ((input: string | URL | Request, init?: RequestInit) => {
    const bodyText = typeof init?.body === 'string' ? init.body : '';
    requests.push({
      url: input instanceof Request ? input.url : input.toString(),
      headers: new Headers(init?.headers),
      body: bodyText ? (JSON.parse(bodyText) as Record<string, unknown>) : {},
    });
    const scripted = responses.shift();
    if (!scripted) return Promise.reject(new Error('scriptedFetch: no response left'));
    const signal = init?.signal ?? undefined;
    let next = 0;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        signal?.addEventListener('abort', () => {
          try {
            controller.error(new DOMException('This operation was aborted', 'AbortError'));
          } catch {
            // already closed
          }
        });
      },
      pull(controller) {
        const chunk = scripted.chunks[next++];
        if (chunk) controller.enqueue(chunk);
        else if (scripted.hang) return new Promise<void>(() => undefined);
        else controller.close();
      },
    });
    const headers = { 'content-type': 'application/json', ...scripted.headers };
    return Promise.resolve(new Response(stream, { status: scripted.status ?? 200, headers }));
  }) as typeof fetch;
  return { fetch: fetchFn, requests };
}

// ---- byte splitting -------------------------------------------------------------------------------

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cut offsets (exclusive ends of all chunks but the last) with chunk sizes 1..maxChunk. */
export function randomCuts(length: number, seed: number, maxChunk: number): number[] {
  const random = mulberry32(seed);
  const cuts: number[] = [];
  for (
    let offset = 1 + Math.floor(random() * maxChunk);
    offset < length;
    offset += 1 + Math.floor(random() * maxChunk)
  ) {
    cuts.push(offset);
  }
  return cuts;
}

export function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    chunks.push(bytes.slice(start, cut));
    start = cut;
  }
  return chunks;
}

export function everyOffset(length: number): number[] {
  return Array.from({ length: length - 1 }, (_, i) => i + 1);
}

/** A cut at `offset` falls between two bytes of one UTF-8 character when the next byte is a continuation byte. */
export function cutsInsideUtf8(bytes: Uint8Array, cuts: readonly number[]): number {
  return cuts.filter((cut) => ((bytes[cut] ?? 0) & 0xc0) === 0x80).length;
}

export function cutsInsideDataPrefix(bytes: Uint8Array, cuts: readonly number[]): number {
  const text = Buffer.from(bytes).toString('latin1');
  const inside = new Set<number>();
  for (let at = text.indexOf('data: '); at !== -1; at = text.indexOf('data: ', at + 1)) {
    for (let k = 1; k < 6; k++) inside.add(at + k);
  }
  return cuts.filter((cut) => inside.has(cut)).length;
}
