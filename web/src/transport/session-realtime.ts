// One Web PubSub connection that follows a session's group (GET /api/realtime/negotiate): each group message is
// a batch of a turn's events, handed to whoever follows that turn.
import { WebPubSubClient } from '@azure/web-pubsub-client';
import type { ChatEvent } from '../../../shared/streaming/contracts.js';
import type { ApiClient } from '../api/client';
import { receiveServerMessage } from './memory-changes';

export interface TurnListener {
  onEvents(events: ChatEvent[]): void;
  /** The connection dropped: events may be missed until it is back, so the listener reads the stream instead. */
  onDisconnected(): void;
}

export class SessionRealtime {
  private readonly listeners = new Map<string, Set<TurnListener>>();
  private connected = false;

  private constructor(private readonly client: WebPubSubClient) {
    client.on('group-message', (e) => {
      const data: unknown = e.message.data;
      if (!Array.isArray(data)) return;
      const byTurn = new Map<string, ChatEvent[]>();
      for (const event of data as ChatEvent[]) {
        const batch = byTurn.get(event.chatMessageId) ?? [];
        batch.push(event);
        byTurn.set(event.chatMessageId, batch);
      }
      for (const [chatMessageId, events] of byTurn)
        for (const listener of this.listeners.get(chatMessageId) ?? []) listener.onEvents(events);
    });
    // Messages to the user (not to the session's group): the memory worker's notices.
    client.on('server-message', (e) => void receiveServerMessage(e.message.data));
    client.on('connected', () => {
      this.connected = true;
    });
    const dropped = (): void => {
      this.connected = false;
      for (const set of this.listeners.values()) for (const listener of set) listener.onDisconnected();
    };
    client.on('disconnected', dropped);
    client.on('stopped', dropped);
  }

  /** Connects, or throws when the WebSocket cannot open within `timeoutMs` (the caller then uses HTTP only). */
  static async open(api: ApiClient, sessionId: string, timeoutMs: number): Promise<SessionRealtime> {
    const negotiate = async (): Promise<string> => {
      const { url } = await api.json<{ url: string }>(
        'GET',
        `/api/realtime/negotiate?sessionId=${encodeURIComponent(sessionId)}`,
      );
      return url;
    };
    const client = new WebPubSubClient({ getClientAccessUrl: negotiate }, { autoReconnect: true });
    const realtime = new SessionRealtime(client);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('The WebSocket did not open in time.')), timeoutMs);
    });
    try {
      await Promise.race([client.start(), timeout]);
    } catch (error) {
      client.stop();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    realtime.connected = true;
    return realtime;
  }

  get isConnected(): boolean {
    return this.connected;
  }

  follow(chatMessageId: string, listener: TurnListener): () => void {
    const set = this.listeners.get(chatMessageId) ?? new Set<TurnListener>();
    set.add(listener);
    this.listeners.set(chatMessageId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(chatMessageId);
    };
  }

  close(): void {
    this.listeners.clear();
    this.client.stop();
  }
}
