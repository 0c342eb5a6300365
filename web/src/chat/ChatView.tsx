// The chat: an open conversation's stored messages, then useChat over the Web PubSub transport for new turns;
// stop, regenerate, edit and switching alternatives, and errors shown with what to do about them.
import { useChat } from '@ai-sdk/react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { ApiError, describeError } from '../api/client';
import type { ApiClient } from '../api/client';
import { WebPubSubChatTransport } from '../transport/web-pubsub-chat-transport';
import { Composer } from './Composer';
import { MessageView } from './MessageView';
import { fromHistory, turnOf } from './messages';
import type { ChatUIMessage, StoredConversation } from './messages';

/** The chat's session: known from the start for an open conversation, started on the first send otherwise. */
class SessionHolder {
  constructor(
    private readonly api: ApiClient,
    private id: string | undefined,
    private readonly onStarted: (sessionId: string) => void,
  ) {}

  current(): string | undefined {
    return this.id;
  }

  async ensure(): Promise<string> {
    if (this.id !== undefined) return this.id;
    const { sessionId } = await this.api.json<{ sessionId: string }>('POST', '/api/session/start', {});
    this.id = sessionId;
    this.onStarted(sessionId);
    return sessionId;
  }
}

export interface ChatViewProps {
  readonly api: ApiClient;
  /** The conversation to show; undefined for a new one, started on the first send. */
  readonly sessionId: string | undefined;
  readonly onSessionStarted: (sessionId: string) => void;
}

const PAGE = 100;

/** The conversation's newest messages along its shown branch, oldest first. */
async function loadConversation(api: ApiClient, sessionId: string): Promise<StoredConversation> {
  try {
    const conversation = await api.json<StoredConversation>(
      'GET',
      `/api/history/conversations/${encodeURIComponent(sessionId)}?order=desc&limit=${PAGE}`,
    );
    return { ...conversation, messages: [...conversation.messages].reverse() };
  } catch (error) {
    // History knows a conversation once its first turn has ended: until then (a reload during the first
    // answer) there is nothing stored to show, and resuming brings the running answer.
    if (error instanceof ApiError && error.status === 404) return { sessionId, messages: [] };
    throw error;
  }
}

export function ChatView(props: ChatViewProps): ReactNode {
  const [initial, setInitial] = useState<ChatUIMessage[] | undefined>(
    props.sessionId === undefined ? [] : undefined,
  );
  const [loadError, setLoadError] = useState<unknown>(undefined);
  // Only the conversation it opened with is loaded: a new chat learning its session id keeps what it shows.
  const [sessionId] = useState(props.sessionId);
  const { api } = props;
  useEffect(() => {
    if (sessionId === undefined) return;
    let live = true;
    loadConversation(api, sessionId).then(
      (conversation) => live && setInitial(fromHistory(conversation.messages)),
      (error: unknown) => live && setLoadError(error),
    );
    return () => {
      live = false;
    };
  }, [api, sessionId]);
  if (loadError !== undefined)
    return (
      <p className="chat-error" role="alert">
        This conversation could not be opened: {describeError(loadError)}
      </p>
    );
  if (initial === undefined)
    return (
      <p className="muted" role="status">
        Loading the conversation…
      </p>
    );
  return <ChatSession {...props} initial={initial} />;
}

function ChatSession(props: ChatViewProps & { initial: ChatUIMessage[] }): ReactNode {
  const { api, onSessionStarted } = props;
  // Mutable on purpose: a new chat learns its session id on its first send, without a re-render.
  const [session] = useState(() => new SessionHolder(api, props.sessionId, onSessionStarted));
  const [chatId] = useState(() => props.sessionId ?? crypto.randomUUID());
  const [actionError, setActionError] = useState<unknown>(undefined);
  const composerRef = useRef<HTMLTextAreaElement>(null);
  const logRef = useRef<HTMLDivElement>(null);

  const transport = useMemo(() => new WebPubSubChatTransport({ api, session }), [api, session]);
  useEffect(() => () => transport.close(), [transport]);

  const reloadRef = useRef<(expectTurn?: string) => Promise<void>>(() => Promise.resolve());
  const chat = useChat<ChatUIMessage>({
    id: chatId,
    messages: props.initial,
    transport,
    resume: props.sessionId !== undefined,
    generateId: () => crypto.randomUUID(),
    onFinish: ({ message, isError }) => {
      // The stored conversation is the truth: it brings the turn's alternatives and what a crash replaced.
      if (!isError) void reloadRef.current(turnOf(message));
    },
  });
  const { messages, setMessages, status, error } = chat;
  const busy = status === 'submitted' || status === 'streaming';

  const reload = useCallback(
    async (expectTurn?: string) => {
      const sessionId = session.current();
      if (sessionId === undefined) return;
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const conversation = await loadConversation(api, sessionId).catch(() => undefined);
        const stored = conversation === undefined ? [] : fromHistory(conversation.messages);
        if (
          conversation !== undefined &&
          (expectTurn === undefined ||
            stored.some((message) => message.role === 'assistant' && turnOf(message) === expectTurn))
        ) {
          setMessages(stored);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
      }
    },
    [api, session, setMessages],
  );
  useEffect(() => {
    reloadRef.current = reload;
  }, [reload]);

  // A dropped connection (the runtime restarting, a network blip) is not the end of the answer: resume it.
  const resumeAttempts = useRef(0);
  useEffect(() => {
    if (status !== 'error' || error instanceof ApiError || session.current() === undefined) return;
    if (resumeAttempts.current >= 20) return;
    const timer = setTimeout(() => {
      resumeAttempts.current += 1;
      chat.clearError();
      void chat.resumeStream().then(() => reload());
    }, 1_500);
    return () => clearTimeout(timer);
  }, [status, error, chat, reload, session]);

  useEffect(() => {
    const log = logRef.current;
    if (log !== null) log.scrollTop = log.scrollHeight;
  }, [messages]);

  const focusComposer = (): void => composerRef.current?.focus();

  const send = (text: string, useMemory: boolean): void => {
    setActionError(undefined);
    resumeAttempts.current = 0;
    void chat.sendMessage({ text, metadata: useMemory ? {} : { useMemory: false } });
    focusComposer();
  };

  const stop = async (): Promise<void> => {
    const sessionId = session.current();
    const last = messages.at(-1);
    if (sessionId === undefined || last === undefined) return chat.stop();
    // The answer's stream ends by itself with what was shown so far, which is what the server keeps.
    try {
      await api.json('POST', `/api/chat/${sessionId}/${encodeURIComponent(turnOf(last))}/cancel`);
    } catch (cancelError) {
      setActionError(cancelError);
      await chat.stop();
    }
    focusComposer();
  };

  const actions = {
    busy,
    onRegenerate: (message: ChatUIMessage) => {
      setActionError(undefined);
      void chat.regenerate({ messageId: message.id });
    },
    onEdit: (message: ChatUIMessage, text: string) => {
      setActionError(undefined);
      const index = messages.findIndex((candidate) => candidate.id === message.id);
      setMessages(messages.slice(0, Math.max(0, index)));
      void chat.sendMessage({ text }, { body: { editOf: turnOf(message) } });
      focusComposer();
    },
    onSwitch: (chatMessageId: string) => {
      const sessionId = session.current();
      if (sessionId === undefined) return;
      setActionError(undefined);
      api
        .json<StoredConversation>(
          'PUT',
          `/api/history/conversations/${encodeURIComponent(sessionId)}/branch?order=desc&limit=${PAGE}`,
          { chatMessageId },
        )
        .then(
          (conversation) => setMessages(fromHistory([...conversation.messages].reverse())),
          (switchError: unknown) => setActionError(switchError),
        );
    },
  };

  const shownError = actionError ?? (error instanceof ApiError ? error : undefined);
  return (
    <section className="chat" aria-label="Chat">
      <div className="chat-log" ref={logRef} role="log" aria-label="Messages" aria-live="polite">
        {messages.length === 0 && (
          <p className="muted">Ask anything. The assistant remembers what matters.</p>
        )}
        {messages.map((message, index) => (
          <MessageView
            key={message.id}
            message={message}
            streaming={busy && index === messages.length - 1 && message.role === 'assistant'}
            actions={actions}
          />
        ))}
        {status === 'submitted' && (
          <p className="muted" role="status">
            Thinking…
          </p>
        )}
      </div>
      {shownError !== undefined && (
        <p className="chat-error" role="alert">
          {describeError(shownError)}
        </p>
      )}
      {status === 'error' && shownError === undefined && (
        <p className="chat-error" role="status">
          The connection dropped; reconnecting…
        </p>
      )}
      <Composer ref={composerRef} busy={busy} onSend={send} onStop={() => void stop()} />
    </section>
  );
}
