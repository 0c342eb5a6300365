// The hostile-input suite's instruments: a raw HTTP client (node:http, so the path, the Host header and every
// byte of the body are sent exactly as written), a sampler of /api/health latencies, and a sampler of resident
// memory (this process, where the local runtime runs, plus any child process it started).
import { request } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';

export interface RawRequest {
  method: string;
  /** Sent as written: percent-encoding, dots and all. */
  path: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as text (at most the first 64 KB). */
  text: string;
  /** 'timeout' when no answer came in time, 'reset' when the connection broke before one. */
  error?: 'timeout' | 'reset';
}

const MAX_BODY_TEXT = 64 * 1024;

/** Sends one request and reads the answer, never throwing: a broken or missing answer is status 0. */
export function sendRaw(baseUrl: string, raw: RawRequest, timeoutMs: number): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: RawAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const body = raw.body === undefined ? undefined : Buffer.from(raw.body);
    const headers: Record<string, string> = {
      ...(body === undefined ? {} : { 'content-length': String(body.length) }),
      ...raw.headers,
    };
    const outgoing = request(
      { host: hostname, port, method: raw.method, path: raw.path, headers, setHost: !('host' in headers) },
      (incoming) => {
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on('data', (chunk: Buffer) => {
          if (size < MAX_BODY_TEXT) chunks.push(chunk);
          size += chunk.length;
        });
        incoming.on('end', () =>
          finish({
            status: incoming.statusCode ?? 0,
            headers: Object.fromEntries(
              Object.entries(incoming.headers).map(([name, value]) => [
                name,
                Array.isArray(value) ? value.join(', ') : (value ?? ''),
              ]),
            ),
            text: Buffer.concat(chunks).toString('utf8').slice(0, MAX_BODY_TEXT),
          }),
        );
        incoming.on('error', () => finish({ status: 0, headers: {}, text: '', error: 'reset' }));
      },
    );
    const timer = setTimeout(() => {
      finish({ status: 0, headers: {}, text: '', error: 'timeout' });
      outgoing.destroy();
    }, timeoutMs);
    outgoing.on('error', () => finish({ status: 0, headers: {}, text: '', error: 'reset' }));
    outgoing.end(body);
  });
}

/** Runs `work` over `items`, at most `limit` at once, in order of the items. */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export interface HealthSample {
  latencyMs: number;
  status: number;
  /** The answer's body when it was not a 200: which dependency was down, and why. */
  detail?: string;
}

/** Polls GET /api/health every `intervalMs` (after the previous answer) until stopped. */
export function sampleHealth(baseUrl: string, intervalMs: number): { stop(): Promise<HealthSample[]> } {
  const samples: HealthSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const answer = await sendRaw(baseUrl, { method: 'GET', path: '/api/health' }, 30_000);
      const latencyMs = performance.now() - started;
      samples.push(
        answer.status === 200
          ? { latencyMs, status: answer.status }
          : { latencyMs, status: answer.status, detail: answer.error ?? answer.text.slice(0, 4000) },
      );
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** Samples resident memory every `intervalMs` until stopped; the peak seen, in bytes. */
export function sampleMemory(intervalMs: number): { stop(): number } {
  let peak = residentBytes();
  const timer = setInterval(() => {
    peak = Math.max(peak, residentBytes());
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, residentBytes());
    },
  };
}

/** This process's resident set, with its child processes' where /proc tells them (Linux). */
export function residentBytes(): number {
  return process.memoryUsage().rss + childProcessesRss();
}

function childProcessesRss(): number {
  try {
    let total = 0;
    for (const task of readdirSync('/proc/self/task')) {
      const children = readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim();
      for (const pid of children === '' ? [] : children.split(/\s+/)) {
        const kilobytes = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
        total += Number(kilobytes ?? 0) * 1024;
      }
    }
    return total;
  } catch {
    return 0; // no /proc (not Linux), or a child that ended as it was read
  }
}

/** The value below which `fraction` of the numbers lie (nearest rank). */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}
