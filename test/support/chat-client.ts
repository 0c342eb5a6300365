// A chat client for end-to-end tests that talks to the running product as a browser app would: HTTP with a
// dev identity, a session's events over Web PubSub and over SSE, and helpers to wait for a turn's end.
import { randomUUID } from 'node:crypto';
import { WebPubSubClient } from '@azure/web-pubsub-client';
import { createParser } from 'eventsource-parser';
import { CHAT_EVENT_TYPES, isTerminalEvent, type ChatEvent } from '../../shared/streaming/contracts.js';

export const DEV_IDENTITY_HEADER = 'x-ms-client-principal-id';

const DEFAULT_TIMEOUT_MS = 10_000;

/** One SSE frame as the client parsed it: the frame's own id and event name, and the event in its data. */
export interface SseFrame {
  id: string | undefined;
  event: string | undefined;
  data: ChatEvent;
}

export class ChatClient {
  /** Listeners that follow every session this client starts (see listen()). */
  private readonly listeners = new Set<RealtimeListener>();

  constructor(
    readonly baseUrl: string,
    readonly userId: string,
  ) {}

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { [DEV_IDENTITY_HEADER]: this.userId, ...extra };
  }

  /** POST /api/session/start; the new session's id. */
  async startSession(): Promise<string> {
    const response = await fetch(`${this.baseUrl}/api/session/start`, {
      method: 'POST',
      headers: this.headers(),
    });
    const body = await expectStatus<{ sessionId: string; userId: string }>(response, 201);
    if (body.userId !== this.userId) throw new Error(`session of ${body.userId}, expected ${this.userId}`);
    // As a web client does when it opens a session: it connects to that session's live events first.
    await Promise.all([...this.listeners].map((listener) => listener.follow(body.sessionId)));
    return body.sessionId;
  }

  /** POST /api/chat with a JSON body, as given. */
  post(body: unknown): Promise<Response> {
    return fetch(`${this.baseUrl}/api/chat`, {
      method: 'POST',
      headers: this.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
  }

  /** Posts a message and checks it was queued (202); its chatMessageId. */
  async send(sessionId: string, text: string, chatMessageId: string = randomUUID()): Promise<string> {
    const accepted = await expectStatus<{ chatMessageId: string; status: string; stream: string }>(
      await this.post({ sessionId, chatMessageId, text }),
      202,
    );
    if (accepted.chatMessageId !== chatMessageId || accepted.status !== 'queued')
      throw new Error(`unexpected 202 body ${JSON.stringify(accepted)}`);
    return chatMessageId;
  }

  /** GET /api/stream/{sessionId}/{chatMessageId} with the given extra headers, unread. */
  openStream(
    sessionId: string,
    chatMessageId: string,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return fetch(`${this.baseUrl}/api/stream/${sessionId}/${chatMessageId}`, {
      headers: this.headers({ accept: 'text/event-stream', ...headers }),
    });
  }

  /** The turn's SSE frames (after lastEventId when given) until the server ends the stream. */
  async stream(
    sessionId: string,
    chatMessageId: string,
    options: { lastEventId?: string; timeoutMs?: number } = {},
  ): Promise<SseFrame[]> {
    const response = await this.openStream(
      sessionId,
      chatMessageId,
      options.lastEventId === undefined ? {} : { 'last-event-id': options.lastEventId },
    );
    if (response.status !== 200 || !response.headers.get('content-type')?.startsWith('text/event-stream'))
      throw new Error(`SSE stream answered ${response.status}: ${await response.text()}`);
    return readSseFrames(response, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  }

  /** GET /api/realtime/negotiate?sessionId=; the Web PubSub client URL that follows that session. */
  async negotiate(sessionId: string): Promise<string> {
    const response = await fetch(
      `${this.baseUrl}/api/realtime/negotiate?sessionId=${encodeURIComponent(sessionId)}`,
      { headers: this.headers() },
    );
    const { url } = await expectStatus<{ url: string; expiresAt: string }>(response, 200);
    return url;
  }

  /**
   * A listener that records every event it receives, following the given sessions now and every session this
   * client starts from then on (one Web PubSub connection per session, as one browser tab per session has).
   */
  async listen(...sessionIds: string[]): Promise<RealtimeListener> {
    const listener = new RealtimeListener(
      (sessionId) => this.negotiate(sessionId),
      () => this.listeners.delete(listener),
    );
    this.listeners.add(listener);
    for (const sessionId of sessionIds) await listener.follow(sessionId);
    return listener;
  }
}

/** The events the Web PubSub connections of a listener receive, in arrival order and per turn de-duplicated by seq. */
export class RealtimeListener {
  /** Every chat event as it arrived, duplicates included. */
  readonly arrivals: ChatEvent[] = [];
  /** Every other message, with the connection (index into the followed sessions) that received it. */
  readonly others: { connection: number; data: unknown }[] = [];
  private readonly clients: WebPubSubClient[] = [];
  private readonly turns = new Map<string, Map<number, ChatEvent>>();
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly negotiate: (sessionId: string) => Promise<string>,
    private readonly onStop: () => void,
  ) {}

  /** Connects to the session's live events; resolves once connected (and so in the session's group). */
  async follow(sessionId: string): Promise<void> {
    const client = new WebPubSubClient(await this.negotiate(sessionId));
    const connection = this.clients.length;
    this.clients.push(client);
    // The app sends a session's events as batches (JSON arrays) to its group; other messages come one by one.
    client.on('group-message', ({ message }) => this.receive(connection, message.data));
    client.on('server-message', ({ message }) => this.receive(connection, message.data));
    await client.start();
  }

  stop(): void {
    this.onStop();
    for (const client of this.clients) client.stop();
  }

  private receive(connection: number, data: unknown): void {
    const batch =
      Array.isArray(data) && data.every(isChatEvent) ? data : isChatEvent(data) ? [data] : undefined;
    if (batch === undefined) this.others.push({ connection, data });
    for (const event of batch ?? []) {
      this.arrivals.push(event);
      const turn = this.turns.get(event.chatMessageId) ?? new Map<number, ChatEvent>();
      this.turns.set(event.chatMessageId, turn);
      if (!turn.has(event.seq)) turn.set(event.seq, event);
    }
    for (const waiter of [...this.waiters]) waiter();
  }

  /** A turn's events received so far, once each, in seq order. */
  events(chatMessageId: string): ChatEvent[] {
    return [...(this.turns.get(chatMessageId)?.values() ?? [])].sort((a, b) => a.seq - b.seq);
  }

  /** All the chat events received, in arrival order, of the given turn or of every turn. */
  arrived(chatMessageId?: string): ChatEvent[] {
    return this.arrivals.filter(
      (event) => chatMessageId === undefined || event.chatMessageId === chatMessageId,
    );
  }

  /** The turn's events once its terminal event and every seq before it have arrived. */
  waitForTerminal(chatMessageId: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<ChatEvent[]> {
    return this.waitFor(
      () => {
        const events = this.events(chatMessageId);
        const last = events[events.length - 1];
        return last !== undefined && isTerminalEvent(last) && last.seq === events.length ? events : undefined;
      },
      timeoutMs,
      `the end of turn ${chatMessageId}`,
    );
  }

  /**
   * Resolves once a non-event message matching the predicate has arrived on every connection of the listener
   * (messages to a connection arrive in order, so a marker tells that everything sent before it has arrived).
   */
  waitForMessage(predicate: (data: unknown) => boolean, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<unknown> {
    return this.waitFor(
      () => {
        const matching = this.others.filter((other) => predicate(other.data));
        const everywhere = this.clients.every((_, index) => matching.some((m) => m.connection === index));
        return everywhere ? (matching[0]?.data ?? true) : undefined;
      },
      timeoutMs,
      'a matching message',
    );
  }

  private waitFor<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = probe();
        if (value === undefined) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`Web PubSub client: no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }
}

/** The text a client shows: the content deltas joined in seq order. */
export function assembleText(events: readonly ChatEvent[]): string {
  return [...events]
    .sort((a, b) => a.seq - b.seq)
    .map((event) => (event.type === 'content' ? event.delta : ''))
    .join('');
}

/** The events' seq numbers, in the order given. */
export function seqs(events: readonly { seq: number }[]): number[] {
  return events.map((event) => event.seq);
}

/** 1..n */
export function oneTo(n: number): number[] {
  return Array.from({ length: n }, (_, index) => index + 1);
}

/** The body of a response with the expected status; anything else throws with what the server said. */
export async function expectStatus<T>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  if (response.status !== status)
    throw new Error(`${response.url} answered ${response.status} (expected ${status}): ${text}`);
  return JSON.parse(text) as T;
}

async function readSseFrames(response: Response, timeoutMs: number): Promise<SseFrame[]> {
  const frames: SseFrame[] = [];
  const parser = createParser({
    onEvent: (message) =>
      frames.push({ id: message.id, event: message.event, data: JSON.parse(message.data) as ChatEvent }),
  });
  const body = response.body;
  if (body === null) return frames;
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void reader.cancel();
  }, timeoutMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) throw new Error(`the SSE stream did not end within ${timeoutMs} ms`);
  return frames;
}

function isChatEvent(data: unknown): data is ChatEvent {
  if (typeof data !== 'object' || data === null) return false;
  const event = data as Partial<Record<keyof ChatEvent, unknown>>;
  return (
    typeof event.type === 'string' &&
    (CHAT_EVENT_TYPES as readonly string[]).includes(event.type) &&
    typeof event.chatMessageId === 'string' &&
    typeof event.seq === 'number'
  );
}
