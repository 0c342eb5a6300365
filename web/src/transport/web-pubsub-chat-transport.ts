// useChat's transport: a message is posted like POST /api/chat and its answer arrives live over Web PubSub, the
// events turned into UI message chunks, any gap read from the SSE stream endpoint. Without a WebSocket it is
// the plain UI stream (POST /api/ui/chat); resuming a running answer reads GET /api/ui/chat/{id}/stream.
import { DefaultChatTransport } from 'ai';
import type { ChatTransport, UIMessageChunk } from 'ai';
import type { ChatEvent } from '../../../shared/streaming/contracts.js';
import { UiMessageChunker } from '../../../shared/streaming/ui-message-chunks.js';
import type { ApiClient } from '../api/client';
import { uploadFileParts } from '../chat/attachments';
import { assistantMessageId, messageText, turnOf } from '../chat/messages';
import type { ChatMetadata, ChatUIMessage } from '../chat/messages';
import { SessionRealtime } from './session-realtime';
import { TurnEventOrder } from './turn-event-order';
import { readTurnEvents } from './turn-stream-reader';

export interface SessionHandle {
  /** The session's id, creating the session first when the chat is new. */
  ensure(): Promise<string>;
  /** The session's id, or undefined while the chat is new. */
  current(): string | undefined;
}

export interface WebPubSubChatTransportOptions {
  api: ApiClient;
  session: SessionHandle;
  /** How long a WebSocket may take to open before the transport uses HTTP only. */
  realtimeTimeoutMs?: number;
  /** Without live events for this long, the transport reads the turn from the SSE endpoint. */
  stallMs?: number;
  /** Tests and pages without WebSocket support pass false. */
  realtime?: boolean;
  /** Told when a turn ends with an `error` event: its code and message, as the event carried them. */
  onTurnError?: (failure: TurnFailure) => void;
}

/** A turn's `error` event, as the page shows it. */
export interface TurnFailure {
  code?: string;
  message: string;
}

type SendOptions = Parameters<ChatTransport<ChatUIMessage>['sendMessages']>[0];
type ReconnectOptions = Parameters<ChatTransport<ChatUIMessage>['reconnectToStream']>[0];

/** Extra fields a sendMessage call may pass in its body. */
export interface ChatSendBody {
  /** The chatMessageId of the user message this one replaces: the conversation branches there. */
  editOf?: string;
  /** The catalogue model this one answer goes to; absent: the conversation's model. */
  model?: string;
}

export class WebPubSubChatTransport implements ChatTransport<ChatUIMessage> {
  readonly resumeStreamIsReplay = true;
  private readonly api: ApiClient;
  private readonly session: SessionHandle;
  private readonly realtimeTimeoutMs: number;
  private readonly stallMs: number;
  private realtimeEnabled: boolean;
  private realtime: { sessionId: string; connection: Promise<SessionRealtime | undefined> } | undefined;
  private readonly uiStream: DefaultChatTransport<ChatUIMessage>;
  private readonly onTurnError: ((failure: TurnFailure) => void) | undefined;

  constructor(options: WebPubSubChatTransportOptions) {
    this.api = options.api;
    this.onTurnError = options.onTurnError;
    this.session = options.session;
    this.realtimeTimeoutMs = options.realtimeTimeoutMs ?? 5_000;
    this.stallMs = options.stallMs ?? 3_000;
    this.realtimeEnabled = (options.realtime ?? true) && typeof WebSocket !== 'undefined';
    const api = this.api;
    this.uiStream = new DefaultChatTransport<ChatUIMessage>({
      api: '/api/ui/chat',
      // The API client adds the identity's headers and turns a problem+json answer into an ApiError.
      fetch: (input, init) =>
        api.fetch(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, init),
      // The conversation lives on the server: only the new message goes, under the session's id.
      prepareSendMessagesRequest: ({ id, messages, trigger, messageId, body }) => ({
        body: {
          ...body,
          id: this.session.current() ?? id,
          messages: messages.slice(-1),
          trigger,
          // The endpoint names a turn by its chatMessageId; this page names an answer `${chatMessageId}_assistant`.
          messageId: messageId?.replace(/_assistant$/, ''),
        },
      }),
      prepareReconnectToStreamRequest: ({ id }) => ({
        api: `/api/ui/chat/${encodeURIComponent(this.session.current() ?? id)}/stream`,
      }),
    });
  }

  async sendMessages(options: SendOptions): Promise<ReadableStream<UIMessageChunk>> {
    const sessionId = await this.session.ensure();
    const realtime = await this.connect(sessionId);
    if (realtime === undefined) {
      const stream = await this.uiStream.sendMessages({ ...options, chatId: sessionId });
      return stream.pipeThrough(assistantIds()).pipeThrough(turnErrors(this.onTurnError));
    }
    const turn = this.turnToPost(sessionId, options);
    return this.follow(realtime, sessionId, turn.chatMessageId, turn.post, options.abortSignal).pipeThrough(
      turnErrors(this.onTurnError),
    );
  }

  async reconnectToStream(options: ReconnectOptions): Promise<ReadableStream<UIMessageChunk> | null> {
    const sessionId = this.session.current();
    if (sessionId === undefined) return null;
    const stream = await this.uiStream.reconnectToStream({ ...options, chatId: sessionId });
    return stream === null
      ? null
      : stream.pipeThrough(assistantIds()).pipeThrough(turnErrors(this.onTurnError));
  }

  close(): void {
    const current = this.realtime;
    this.realtime = undefined;
    void current?.connection.then((connection) => connection?.close());
  }

  /** The session's live connection, opened once; undefined (HTTP only from then on) when it cannot open. */
  private async connect(sessionId: string): Promise<SessionRealtime | undefined> {
    if (!this.realtimeEnabled) return undefined;
    if (this.realtime?.sessionId !== sessionId) {
      this.close();
      const connection = SessionRealtime.open(this.api, sessionId, this.realtimeTimeoutMs).catch(
        (error: unknown) => {
          console.warn('Live events are not available; answers stream over HTTP.', error);
          this.realtimeEnabled = false;
          return undefined;
        },
      );
      this.realtime = { sessionId, connection };
    }
    return this.realtime.connection;
  }

  /** The request a send or a regenerate makes, and the turn (chatMessageId) whose events answer it. */
  private turnToPost(
    sessionId: string,
    options: SendOptions,
  ): { chatMessageId: string; post: () => Promise<unknown> } {
    const body = (options.body ?? {}) as ChatSendBody;
    if (options.trigger === 'regenerate-message') {
      // useChat has already taken the answer out of `messages`; its id (`${chatMessageId}_assistant`) names the turn.
      const user = [...options.messages].reverse().find((message) => message.role === 'user');
      const earlier =
        options.messageId?.endsWith('_assistant') === true
          ? options.messageId.slice(0, -'_assistant'.length)
          : user === undefined
            ? undefined
            : turnOf(user);
      if (earlier === undefined) throw new Error('There is no answer to regenerate.');
      const chatMessageId = crypto.randomUUID();
      const path = `/api/chat/${sessionId}/${encodeURIComponent(earlier)}/regenerate`;
      const model = body.model === undefined ? {} : { model: body.model };
      return { chatMessageId, post: () => this.api.json('POST', path, { chatMessageId, ...model }) };
    }
    const message = options.messages.at(-1);
    if (message === undefined || message.role !== 'user') throw new Error('There is no message to send.');
    const metadata: ChatMetadata = message.metadata ?? {};
    const chatMessageId = message.id;
    return {
      chatMessageId,
      post: async () => {
        // Its files are stored first; the message names them.
        const attachments = await uploadFileParts(this.api, message.parts);
        return this.api.json('POST', '/api/chat', {
          sessionId,
          chatMessageId,
          text: messageText(message),
          ...(metadata.useMemory === false ? { use_memory: false } : {}),
          ...(body.editOf === undefined ? {} : { editOf: body.editOf }),
          ...(body.model === undefined ? {} : { model: body.model }),
          ...(attachments.length > 0 ? { attachments } : {}),
        });
      },
    };
  }

  /**
   * The turn's events as chunks: live from Web PubSub, and from the SSE endpoint whenever they stall, a seq is
   * missing or the WebSocket is down. Both go through one seq order, so each event is shown once.
   */
  private follow(
    realtime: SessionRealtime,
    sessionId: string,
    chatMessageId: string,
    post: () => Promise<unknown>,
    abortSignal: AbortSignal | undefined,
  ): ReadableStream<UIMessageChunk> {
    const order = new TurnEventOrder();
    const reading = new AbortController();
    let chunker: UiMessageChunker | undefined;
    let lastProgress = Date.now();
    let retryAt = 0;
    let catchingUp = false;
    let done = false;
    let watchdog: ReturnType<typeof setInterval> | undefined;
    let unfollow: (() => void) | undefined;
    const api = this.api;
    const stallMs = this.stallMs;

    return new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        const finish = (error?: unknown): void => {
          if (done) return;
          done = true;
          clearInterval(watchdog);
          unfollow?.();
          reading.abort();
          if (error === undefined) controller.close();
          else controller.error(error);
        };
        const deliver = (events: readonly ChatEvent[]): void => {
          if (done) return;
          for (const event of order.accept(events)) {
            lastProgress = Date.now();
            chunker ??= new UiMessageChunker({
              messageId:
                event.type === 'message-start' ? event.assistantMessageId : assistantMessageId(chatMessageId),
            });
            for (const chunk of chunker.push(event)) controller.enqueue(chunk);
          }
          if (order.finished) finish();
          else if (order.hasGap) void catchUp();
        };
        const catchUp = async (): Promise<void> => {
          if (catchingUp || done || Date.now() < retryAt) return;
          catchingUp = true;
          try {
            for await (const event of readTurnEvents(
              api,
              sessionId,
              chatMessageId,
              order.lastSeq,
              reading.signal,
            ))
              deliver([event]);
          } catch (error) {
            // The runtime may be restarting: the watchdog reads again from the last seq shown.
            if (!done) console.warn('Reading the turn’s stream failed; retrying.', error);
            retryAt = Date.now() + 1_000;
          } finally {
            catchingUp = false;
            lastProgress = Date.now();
          }
        };
        unfollow = realtime.follow(chatMessageId, {
          onEvents: deliver,
          onDisconnected: () => void catchUp(),
        });
        abortSignal?.addEventListener('abort', () =>
          finish(new DOMException('The request was aborted.', 'AbortError')),
        );
        watchdog = setInterval(() => {
          const stalled = Date.now() - lastProgress >= stallMs;
          if (stalled || order.hasGap || !realtime.isConnected) void catchUp();
        }, 500);
        post().catch((error: unknown) => finish(error));
      },
      cancel: () => {
        done = true;
        clearInterval(watchdog);
        unfollow?.();
        reading.abort();
      },
    });
  }
}

/**
 * The UI stream names an answer by its turn's chatMessageId; this page names it as history does
 * (`${chatMessageId}_assistant`), so the user message and its answer never share an id.
 */
function assistantIds(): TransformStream<UIMessageChunk, UIMessageChunk> {
  return new TransformStream({
    transform(chunk, controller) {
      if (chunk.type === 'start') {
        const metadata = chunk.messageMetadata as ChatMetadata | undefined;
        const turn = metadata?.chatMessageId ?? chunk.messageId;
        const id =
          metadata?.assistantMessageId ?? (turn === undefined ? undefined : assistantMessageId(turn));
        controller.enqueue(id === undefined ? chunk : { ...chunk, messageId: id });
      } else controller.enqueue(chunk);
    },
  });
}

/**
 * Reports a turn's `error` with its code: the error chunk (which ends useChat's reading) is held until the finish
 * chunk after it, which carries the code in its metadata, and both then go on.
 */
function turnErrors(
  report: ((failure: TurnFailure) => void) | undefined,
): TransformStream<UIMessageChunk, UIMessageChunk> {
  let held: Extract<UIMessageChunk, { type: 'error' }> | undefined;
  const release = (controller: TransformStreamDefaultController<UIMessageChunk>, code?: string): void => {
    if (held === undefined) return;
    report?.({ message: held.errorText, ...(code === undefined ? {} : { code }) });
    controller.enqueue(held);
    held = undefined;
  };
  return new TransformStream({
    transform(chunk, controller) {
      if (chunk.type === 'error') {
        release(controller);
        held = chunk;
        return;
      }
      if (chunk.type === 'finish') {
        const code = (chunk.messageMetadata as ChatMetadata | undefined)?.errorCode;
        release(controller, typeof code === 'string' ? code : undefined);
      }
      controller.enqueue(chunk);
    },
    flush(controller) {
      release(controller);
    },
  });
}
