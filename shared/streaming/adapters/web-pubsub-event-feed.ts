// The UserEventFeed on Web PubSub: ONE client connection per process, shared by every SSE relay of the
// process, in the group of each session a relay follows.
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import {
  WebPubSubClient,
  type OnGroupDataMessageArgs,
  type WebPubSubClientOptions,
} from '@azure/web-pubsub-client';
import { DependencyError, ensureError } from '../../errors.js';
import { chatEventSchema, sessionGroup, type ChatEvent } from '../contracts.js';
import type { FeedSubscription, UserEventFeed } from '../user-event-feed.js';

/** How long close() waits for the connection to shut before giving up on it. */
const STOP_WAIT_MS = 5_000;

export interface WebPubSubEventFeedOptions {
  /** Lifetime of each token the shared connection connects with (a new one is made on every reconnection). */
  tokenMinutes?: number;
  /**
   * Default 60_000: how long the shared connection stays open once no session is followed, so the next stream
   * does not pay a new connection; 0 closes it at once.
   */
  idleDisconnectMs?: number;
  /** Options for the underlying client (tests shorten its retry delays). */
  client?: WebPubSubClientOptions;
}

/** The feed, plus close() for the process's shutdown. */
export interface WebPubSubEventFeed extends UserEventFeed {
  /** Leaves every group and closes the shared connection; subscriptions still open receive nothing more. */
  close(): Promise<void>;
  /** How many sessions the shared connection follows (for tests and diagnostics). */
  readonly followedSessions: number;
}

interface Listener {
  sessionId: string;
  onEvent: (event: ChatEvent) => void;
}

/** One followed group: who listens, whether the connection is in it, and the join/leave calls in order. */
interface Follow {
  readonly listeners: Set<Listener>;
  joined: boolean;
  /** join/leave of this group run one after another, each reconciling `joined` with `listeners`. */
  chain: Promise<void>;
}

export function createWebPubSubEventFeed(
  service: WebPubSubServiceClient,
  options: WebPubSubEventFeedOptions = {},
): WebPubSubEventFeed {
  return new SharedGroupFeed(service, options);
}

class SharedGroupFeed implements WebPubSubEventFeed {
  readonly #service: WebPubSubServiceClient;
  readonly #tokenMinutes: number;
  readonly #idleDisconnectMs: number;
  readonly #clientOptions: WebPubSubClientOptions;
  readonly #follows = new Map<string, Follow>();
  /** The shared connection, from its first start; undefined until needed and after it is stopped. */
  #client: Promise<WebPubSubClient> | undefined;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(service: WebPubSubServiceClient, options: WebPubSubEventFeedOptions) {
    this.#service = service;
    this.#tokenMinutes = options.tokenMinutes ?? 60;
    this.#idleDisconnectMs = options.idleDisconnectMs ?? 60_000;
    this.#clientOptions = options.client ?? {};
  }

  get followedSessions(): number {
    return [...this.#follows.values()].filter((follow) => follow.joined).length;
  }

  async subscribe(
    turn: { userId: string; sessionId: string },
    onEvent: (event: ChatEvent) => void,
  ): Promise<FeedSubscription> {
    if (this.#closed) throw feedError(turn.sessionId, new Error('the feed is closed'));
    const group = sessionGroup(turn.sessionId);
    const listener: Listener = { sessionId: turn.sessionId, onEvent };
    let follow = this.#follows.get(group);
    if (!follow) {
      follow = { listeners: new Set(), joined: false, chain: Promise.resolve() };
      this.#follows.set(group, follow);
    }
    follow.listeners.add(listener);
    clearTimeout(this.#idleTimer);
    try {
      await this.#reconcile(group, follow);
    } catch (error) {
      follow.listeners.delete(listener);
      await this.#reconcile(group, follow).catch(() => undefined);
      throw feedError(turn.sessionId, error);
    }
    const joined = follow;
    return {
      close: async () => {
        if (!joined.listeners.delete(listener)) return;
        // A failed leave leaves nothing to undo: messages of a group nobody follows are ignored.
        await this.#reconcile(group, joined).catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    for (const follow of this.#follows.values()) follow.listeners.clear();
    this.#follows.clear();
    await this.#stop();
  }

  /** Joins or leaves the group so the connection is in it exactly while someone listens; runs after earlier calls. */
  #reconcile(group: string, follow: Follow): Promise<void> {
    const step = follow.chain.catch(() => undefined).then(() => this.#apply(group, follow));
    follow.chain = step;
    return step;
  }

  async #apply(group: string, follow: Follow): Promise<void> {
    const wanted = follow.listeners.size > 0;
    if (wanted && !follow.joined && !this.#closed) {
      const client = await this.#connection();
      await client.joinGroup(group);
      follow.joined = true;
    } else if (!wanted && follow.joined) {
      follow.joined = false;
      const client = await this.#client?.catch(() => undefined);
      await client?.leaveGroup(group);
    }
    if (follow.listeners.size === 0 && !follow.joined && this.#follows.get(group) === follow) {
      this.#follows.delete(group);
      if (this.#follows.size === 0) this.#scheduleIdleStop();
    }
  }

  #connection(): Promise<WebPubSubClient> {
    this.#client ??= this.#start().catch((error: unknown) => {
      this.#client = undefined; // the next subscription tries again
      throw error;
    });
    return this.#client;
  }

  async #start(): Promise<WebPubSubClient> {
    const client = new WebPubSubClient(
      {
        // A fresh token for every (re)connection, so a connection outlives any one token.
        getClientAccessUrl: async () =>
          (
            await this.#service.getClientAccessToken({
              roles: ['webpubsub.joinLeaveGroup'],
              expirationTimeInMinutes: this.#tokenMinutes,
            })
          ).url,
      },
      { autoRejoinGroups: true, ...this.#clientOptions },
    );
    client.on('group-message', (e: OnGroupDataMessageArgs) => this.#dispatch(e.message));
    try {
      await client.start();
    } catch (error) {
      client.stop();
      throw error;
    }
    return client;
  }

  /** Hands a group message's events to the listeners of their session; anything else is ignored. */
  #dispatch(message: OnGroupDataMessageArgs['message']): void {
    const follow = this.#follows.get(message.group);
    if (!follow || message.dataType !== 'json' || !Array.isArray(message.data)) return;
    for (const item of message.data as unknown[]) {
      const parsed = chatEventSchema.safeParse(item);
      if (!parsed.success) continue;
      for (const listener of [...follow.listeners]) {
        if (listener.sessionId !== parsed.data.sessionId) continue;
        try {
          listener.onEvent(parsed.data);
        } catch {
          // One relay's failure is its own; the others still get the event.
        }
      }
    }
  }

  #scheduleIdleStop(): void {
    clearTimeout(this.#idleTimer);
    if (this.#idleDisconnectMs === 0) {
      void this.#stop();
      return;
    }
    this.#idleTimer = setTimeout(() => {
      if (this.#follows.size === 0) void this.#stop();
    }, this.#idleDisconnectMs);
    // An idle connection waiting to be reused must not keep the process alive.
    this.#idleTimer.unref?.();
  }

  async #stop(): Promise<void> {
    const starting = this.#client;
    this.#client = undefined;
    const client = await starting?.catch(() => undefined);
    if (!client) return;
    const stopped = new Promise<void>((resolve) => client.on('stopped', () => resolve()));
    client.stop();
    await within(stopped, STOP_WAIT_MS);
  }
}

function feedError(sessionId: string, error: unknown): DependencyError {
  const reason = ensureError(error).message;
  return new DependencyError(
    'webPubSub',
    `Could not follow the live events of session ${sessionId}: ${reason}`,
    { cause: error },
  );
}

/** Waits for `promise`, but no longer than `ms`; the timer never outlives the wait. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
