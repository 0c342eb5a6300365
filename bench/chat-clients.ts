// The chat benchmark's clients, as a browser would use the API: dev-user HTTP calls, one Web PubSub client per
// session a user starts (negotiated for that session; each message a batch of events) that records every turn's
// events with their arrival times, and an SSE reader of one turn's stream.
import { WebPubSubClient } from '@azure/web-pubsub-client';
import { createParser } from 'eventsource-parser';
import { z } from 'zod';

const IDENTITY_HEADER = 'x-ms-client-principal-id';

const chatEventSchema = z.object({
  type: z.string(),
  chatMessageId: z.string(),
  seq: z.number(),
  delta: z.string().optional(),
  message: z.string().optional(),
  usage: z.object({ completionTokens: z.number() }).optional(),
});

type ReceivedEvent = z.infer<typeof chatEventSchema>;

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
  contentEvents = 0;
  startAt: number | undefined;
  firstContentAt: number | undefined;
  endedAt: number | undefined;
  /** The model's output tokens, as message-end reports them. */
  completionTokens: number | undefined;
  /** Arrival time of each whole word of the reply, in order (complete once the turn has ended). */
  readonly wordArrivals: number[] = [];
  text = '';
  /** Arrival time of the last piece of a word that may still go on. */
  #openWordAt: number | undefined;
  readonly #finished: Promise<void>;
  #finish: () => void = () => undefined;

  constructor(private readonly gauge?: TurnGauge) {
    this.#finished = new Promise((resolve) => (this.#finish = resolve));
  }

  record(event: ReceivedEvent, at: number): void {
    if (event.type === 'message-start') {
      this.starts += 1;
      this.startAt ??= at;
      if (this.starts === 1) this.gauge?.enter();
    } else if (event.type === 'content') {
      this.#content(event.delta ?? '', at);
    } else if (event.type === 'message-end' || event.type === 'error') {
      if (event.type === 'error') this.errors.push(event.message ?? 'error event');
      this.#closeWord();
      this.completionTokens ??= event.usage?.completionTokens;
      this.ends += 1;
      this.endedAt ??= at;
      if (this.ends === 1) this.gauge?.leave();
      this.#finish();
    }
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

  #content(delta: string, at: number): void {
    this.contentEvents += 1;
    this.firstContentAt ??= at;
    this.text += delta;
    // A token may be part of a word ("stand", "-", "in"), so a word has arrived once its last piece has.
    for (const part of delta.split(/(\s+)/)) {
      if (part === '') continue;
      if (/^\s/.test(part)) this.#closeWord();
      else this.#openWordAt = at;
    }
  }

  #closeWord(): void {
    if (this.#openWordAt === undefined) return;
    this.wordArrivals.push(this.#openWordAt);
    this.#openWordAt = undefined;
  }
}

export class ChatApi {
  /** Per user: what follows a session the user starts (its UserEvents), before startSession returns. */
  readonly #followers = new Map<string, (sessionId: string) => Promise<void>>();

  constructor(private readonly baseUrl: string) {}

  async startSession(userId: string): Promise<string> {
    const body = await this.#call(userId, 'POST', '/api/session/start', 201);
    const sessionId = z.object({ sessionId: z.string() }).parse(body).sessionId;
    await this.#followers.get(userId)?.(sessionId);
    return sessionId;
  }

  onSession(userId: string, follow: (sessionId: string) => Promise<void>): void {
    this.#followers.set(userId, follow);
  }

  async postChat(userId: string, sessionId: string, chatMessageId: string, text: string): Promise<void> {
    await this.#call(userId, 'POST', '/api/chat', 202, { sessionId, chatMessageId, text });
  }

  async negotiate(userId: string, sessionId: string): Promise<string> {
    const body = await this.#call(userId, 'GET', `/api/realtime/negotiate?sessionId=${sessionId}`, 200);
    return z.object({ url: z.string() }).parse(body).url;
  }

  /** Reads a turn's SSE stream into trace until its terminal event. */
  async readStream(
    userId: string,
    sessionId: string,
    chatMessageId: string,
    trace: TurnTrace,
  ): Promise<void> {
    const response = await fetch(`${this.baseUrl}/api/stream/${sessionId}/${chatMessageId}`, {
      headers: { [IDENTITY_HEADER]: userId, accept: 'text/event-stream' },
    });
    if (response.status !== 200 || !response.body) {
      throw new Error(`GET stream answered ${response.status}: ${await response.text()}`);
    }
    const parser = createParser({
      onEvent: (message) => {
        const at = performance.now();
        const event = chatEventSchema.safeParse(JSON.parse(message.data));
        if (event.success) trace.record(event.data, at);
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
      headers: { [IDENTITY_HEADER]: userId, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== status) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  }
}

/** A user's Web PubSub connections (one per session it starts), recording the events of every turn they receive. */
export class UserEvents {
  readonly #traces = new Map<string, TurnTrace>();
  readonly #clients: WebPubSubClient[] = [];

  private constructor(private readonly gauge: TurnGauge | undefined) {}

  static connect(api: ChatApi, userId: string, gauge?: TurnGauge): Promise<UserEvents> {
    const events = new UserEvents(gauge);
    api.onSession(userId, async (sessionId) => {
      const client = new WebPubSubClient(await api.negotiate(userId, sessionId));
      events.#clients.push(client);
      // A session's events come to its group as batches: JSON arrays of events.
      client.on('group-message', (e) => {
        const at = performance.now();
        const batch = Array.isArray(e.message.data) ? (e.message.data as unknown[]) : [];
        for (const item of batch) {
          const event = chatEventSchema.safeParse(item);
          if (event.success) events.trace(event.data.chatMessageId).record(event.data, at);
        }
      });
      await client.start();
    });
    return Promise.resolve(events);
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
    for (const client of this.#clients) client.stop();
  }
}
