// The chat benchmark's clients, as a browser would use the API: HTTP calls as a signed-in user, a Web PubSub
// client per session that records each turn's events with their arrival times, and SSE readers of one turn's
// stream (the product's, and the direct baseline's).
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebPubSubClient } from '@azure/web-pubsub-client';
import { createParser } from 'eventsource-parser';
import { z } from 'zod';

const IDENTITY_HEADER = 'x-ms-client-principal-id';

/** App Service authentication's headers for a signed-in user: the id, and the principal blob it must agree with. */
function identityHeaders(userId: string): Record<string, string> {
  const blob = { auth_typ: 'aad', claims: [{ typ: 'oid', val: userId }] };
  return {
    [IDENTITY_HEADER]: userId,
    'x-ms-client-principal': Buffer.from(JSON.stringify(blob)).toString('base64'),
  };
}
const MAX_RECONNECTS = 100;
const RECONNECT_DELAY_MS = 250;

const chatEventSchema = z.object({
  type: z.string(),
  chatMessageId: z.string().optional(),
  seq: z.number().optional(),
  delta: z.string().optional(),
  message: z.string().optional(),
  fromSeq: z.number().optional(),
  toSeq: z.number().optional(),
  usage: z.object({ completionTokens: z.number() }).optional(),
});

export type ReceivedEvent = z.infer<typeof chatEventSchema>;

/** The events one message carries: a single event, or (the batched wire) an array of them. */
export function eventsOf(data: unknown): ReceivedEvent[] {
  const parsed = typeof data === 'string' ? parseJson(data) : data;
  const items = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
  return items.flatMap((item) => {
    const event = chatEventSchema.safeParse(item);
    return event.success ? [event.data] : [];
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Counts turns between their message-start and their terminal event, and remembers the most at once. */
export class TurnGauge {
  #active = 0;
  peak = 0;

  enter(): void {
    this.#active += 1;
    this.peak = Math.max(this.peak, this.#active);
  }

  leave(): void {
    this.#active -= 1;
  }

  reset(): void {
    this.peak = this.#active;
  }
}

/** One turn's events as one client received them; times are performance.now() at arrival. */
export class TurnTrace {
  starts = 0;
  ends = 0;
  errors: string[] = [];
  /** Content events received (each message of the wire may carry several). */
  contentEvents = 0;
  /** Events whose seq had already arrived: dropped, as a client following the protocol does. */
  repeatedEvents = 0;
  /** Content events whose text a `discard` dropped. */
  discardedEvents = 0;
  /** Times an SSE client opened the stream again after it ended before the turn did. */
  reconnects = 0;
  startAt: number | undefined;
  firstContentAt: number | undefined;
  endedAt: number | undefined;
  /** The model's output tokens, as message-end reports them. */
  completionTokens: number | undefined;
  readonly #seen = new Set<number>();
  /** Content by seq (arrival order for events without one). */
  readonly #contents = new Map<number, { delta: string; at: number }>();
  #unnumbered = 0;
  readonly #finished: Promise<void>;
  #finish: () => void = () => undefined;

  constructor(private readonly gauge?: TurnGauge) {
    this.#finished = new Promise((resolve) => (this.#finish = resolve));
  }

  record(event: ReceivedEvent, at: number): void {
    if (event.seq !== undefined) {
      if (this.#seen.has(event.seq)) {
        this.repeatedEvents += 1;
        return;
      }
      this.#seen.add(event.seq);
    }
    if (event.type === 'message-start') {
      this.starts += 1;
      this.startAt ??= at;
      if (this.starts === 1) this.gauge?.enter();
    } else if (event.type === 'content') {
      this.contentEvents += 1;
      this.firstContentAt ??= at;
      const key = event.seq ?? Number.MAX_SAFE_INTEGER / 2 + this.#unnumbered++;
      this.#contents.set(key, { delta: event.delta ?? '', at });
    } else if (event.type === 'discard') {
      this.#discard(event.fromSeq ?? Number.NaN, event.toSeq ?? Number.NaN);
    } else if (event.type === 'message-end' || event.type === 'error') {
      if (event.type === 'error') this.errors.push(event.message ?? 'error event');
      this.completionTokens ??= event.usage?.completionTokens;
      this.ends += 1;
      this.endedAt ??= at;
      if (this.ends === 1) this.gauge?.leave();
      this.#finish();
    }
  }

  /** The highest seq received, what a reconnecting SSE client sends as Last-Event-ID. */
  get lastSeq(): number | undefined {
    return this.#seen.size === 0 ? undefined : Math.max(...this.#seen);
  }

  /** The answer as a client following the protocol shows it. */
  get text(): string {
    return this.#ordered()
      .map((content) => content.delta)
      .join('');
  }

  /**
   * Arrival time of each whole word of the answer, in order. A token may be part of a word ("stand", "-",
   * "in"), so a word has arrived once its last piece has.
   */
  get wordArrivals(): number[] {
    const arrivals: number[] = [];
    let openWordAt: number | undefined;
    for (const { delta, at } of this.#ordered()) {
      for (const part of delta.split(/(\s+)/)) {
        if (part === '') continue;
        if (/^\s/.test(part)) {
          if (openWordAt !== undefined) arrivals.push(openWordAt);
          openWordAt = undefined;
        } else {
          openWordAt = at;
        }
      }
    }
    if (openWordAt !== undefined) arrivals.push(openWordAt);
    return arrivals;
  }

  /** Resolves at the turn's first terminal event; rejects after timeoutMs. */
  async finished(timeoutMs: number, label: string): Promise<this> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${label}: no message-end within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([this.#finished, timeout]);
      return this;
    } finally {
      clearTimeout(timer);
    }
  }

  #ordered(): { delta: string; at: number }[] {
    return [...this.#contents.entries()].sort(([a], [b]) => a - b).map(([, content]) => content);
  }

  #discard(fromSeq: number, toSeq: number): void {
    for (const seq of [...this.#contents.keys()]) {
      if (seq >= fromSeq && seq <= toSeq) {
        this.#contents.delete(seq);
        this.discardedEvents += 1;
      }
    }
  }
}

/** The chat API as one signed-in user calls it (App Service authentication's principal header). */
export class ChatApi {
  constructor(readonly baseUrl: string) {}

  async startSession(userId: string): Promise<string> {
    const body = await this.#call(userId, 'POST', '/api/session/start', 201);
    return z.object({ sessionId: z.string() }).parse(body).sessionId;
  }

  /** Queues a message; resolves with the absolute URL of the turn's SSE stream, as the 202 gives it. */
  async postChat(userId: string, sessionId: string, chatMessageId: string, text: string): Promise<string> {
    const body = await this.#call(userId, 'POST', '/api/chat', 202, { sessionId, chatMessageId, text });
    const stream = z.object({ stream: z.string().optional() }).parse(body ?? {}).stream;
    return new URL(stream ?? `/api/stream/${sessionId}/${chatMessageId}`, this.baseUrl).href;
  }

  /** A Web PubSub client URL; `sessionId` asks for that session's events (ignored by a service that does not). */
  async negotiate(userId: string, sessionId: string): Promise<string> {
    const query = new URLSearchParams({ sessionId });
    const body = await this.#call(userId, 'GET', `/api/realtime/negotiate?${query.toString()}`, 200);
    return z.object({ url: z.string() }).parse(body).url;
  }

  /**
   * Reads a turn's SSE stream into trace until its terminal event. A stream that ends before the turn does
   * (an idle timeout while the turn waits in the queue, say) is opened again with Last-Event-ID, as a browser's
   * EventSource does.
   */
  async readStream(userId: string, streamUrl: string, trace: TurnTrace): Promise<void> {
    for (;;) {
      const lastSeq = trace.lastSeq;
      const headers: Record<string, string> = identityHeaders(userId);
      if (lastSeq !== undefined) headers['last-event-id'] = String(lastSeq);
      const open = await readSse(streamUrl, { method: 'GET', headers }, trace);
      if (trace.ends > 0 || open === 'ended' || trace.reconnects >= MAX_RECONNECTS) return;
      trace.reconnects += 1;
      await sleep(RECONNECT_DELAY_MS);
    }
  }

  /** Posts a message and reads its SSE stream: the milliseconds from the post to the answer's first text. */
  async firstContentMs(userId: string, sessionId: string, text: string): Promise<number> {
    const trace = new TurnTrace();
    const posted = performance.now();
    const stream = await this.postChat(userId, sessionId, randomUUID(), text);
    await this.readStream(userId, stream, trace);
    if (trace.firstContentAt === undefined)
      throw new Error(`the turn streamed no content: ${trace.errors.join('; ')}`);
    return trace.firstContentAt - posted;
  }

  /** The direct baseline: one HTTP function that calls the model and streams its text back as SSE. */
  async directChat(userId: string, path: string, text: string, trace: TurnTrace): Promise<void> {
    const init = {
      method: 'POST',
      headers: { ...identityHeaders(userId), 'content-type': 'application/json' },
      body: JSON.stringify({ text }),
    };
    await readSse(new URL(path, this.baseUrl).href, init, trace);
  }

  async #call(
    userId: string,
    method: string,
    path: string,
    status: number,
    body?: unknown,
  ): Promise<unknown> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { ...identityHeaders(userId), 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status !== status) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  }
}

/** Reads one SSE response into trace; 'ended' when the server says the turn has nothing more (204). */
async function readSse(url: string, init: RequestInit, trace: TurnTrace): Promise<'read' | 'ended'> {
  const headers = { ...(init.headers as Record<string, string>), accept: 'text/event-stream' };
  const response = await fetch(url, { ...init, headers });
  if (response.status === 204) return 'ended';
  if (response.status !== 200 || !response.body) {
    throw new Error(`${init.method ?? 'GET'} ${url} answered ${response.status}: ${await response.text()}`);
  }
  const parser = createParser({
    onEvent: (message) => {
      const at = performance.now();
      for (const event of eventsOf(message.data)) trace.record(event, at);
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    while (trace.ends === 0) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
  } finally {
    await reader.cancel();
  }
  return 'read';
}

/** One session's Web PubSub connection, recording the events of every turn it receives. */
export class SessionEvents {
  readonly #traces = new Map<string, TurnTrace>();

  private constructor(
    private readonly client: WebPubSubClient,
    private readonly gauge: TurnGauge | undefined,
  ) {
    // A turn's events arrive as messages to the session's group (older services sent them to the user).
    const receive = (data: unknown) => {
      const at = performance.now();
      for (const event of eventsOf(data)) {
        if (event.chatMessageId !== undefined) this.trace(event.chatMessageId).record(event, at);
      }
    };
    client.on('group-message', (e) => receive(e.message.data));
    client.on('server-message', (e) => receive(e.message.data));
  }

  static async connect(
    api: ChatApi,
    userId: string,
    sessionId: string,
    gauge?: TurnGauge,
  ): Promise<SessionEvents> {
    const events = new SessionEvents(new WebPubSubClient(await api.negotiate(userId, sessionId)), gauge);
    await events.client.start();
    return events;
  }

  /** The trace of a turn (created on first use, so events that arrive first are kept). */
  trace(chatMessageId: string): TurnTrace {
    let trace = this.#traces.get(chatMessageId);
    if (!trace) {
      trace = new TurnTrace(this.gauge);
      this.#traces.set(chatMessageId, trace);
    }
    return trace;
  }

  stop(): void {
    this.client.stop();
  }
}
