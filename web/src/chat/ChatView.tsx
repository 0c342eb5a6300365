// The chat: an open conversation's stored messages, then useChat over the Web PubSub transport for new turns;
// stop (or Escape), regenerate, edit, retry a failed turn and switching alternatives, a log that follows the
// answer only while the reader is at its bottom, and errors shown with what to do about them.
import { useChat } from '@ai-sdk/react';
import { ArrowDown } from 'lucide-react';
import { useCallback, useEffect, useEffectEvent, useMemo, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { ApiError, describeError, type ApiClient } from '../api/client';
import { rateAnswer } from './answer-feedback';
import { approvalsOf } from './approvals';
import { WebPubSubChatTransport, type TurnFailure } from '../transport/web-pubsub-chat-transport';
import { messageFileParts, readAttachment } from './attachments';
import { Composer } from './Composer';
import { EmptyState } from './EmptyState';
import { preloadMarkdown } from './LazyMarkdown';
import type { CitedDocument } from './SourceChips';
import { MessageView, type MessageExtras } from './MessageView';
import { fromHistory, keepShown, messageText, turnOf, withPending } from './messages';
import { turnEnded } from './turn-ends';
import type { ChatUIMessage, StoredConversation } from './messages';
import { forgetPending, pendingQuestion, rememberPending } from './pending-question';
import { useAttachmentRules } from './use-attachment-rules';
import { useStickToBottom } from './use-stick-to-bottom';
import { useThoughtTime } from './use-thought-time';
import { useInitialFocus } from './use-initial-focus';
import { ChatOptions } from '../workspace/ChatOptions';
import { sessionStartOf, type ChatChoices } from '../workspace/chat-choices';
import { SessionHolder } from './session-holder';
import { loadConversation, PAGE } from './load-conversation';
import { connectMcpServer } from '../settings/mcp-servers-api';

export interface ChatViewProps {
  readonly api: ApiClient;
  /** The conversation to show; undefined for a new one, started on the first send. */
  readonly sessionId: string | undefined;
  readonly onSessionStarted: (sessionId: string) => void;
  /** The project a new chat is started in (the sidebar's project filter). */
  readonly projectId?: string | undefined;
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
      (conversation) =>
        live && setInitial(withPending(fromHistory(conversation.messages), pendingQuestion(sessionId))),
      (error: unknown) => live && setLoadError(error),
    );
    return () => {
      live = false;
    };
  }, [api, sessionId]);
  if (loadError !== undefined)
    return (
      <p className="alert m-4" role="alert">
        This conversation could not be opened: {describeError(loadError)}
      </p>
    );
  if (initial === undefined)
    return (
      <p className="muted p-4" role="status">
        Loading the conversation…
      </p>
    );
  return <ChatSession {...props} initial={initial} />;
}

function ChatSession(props: ChatViewProps & { initial: ChatUIMessage[] }): ReactNode {
  const { api, onSessionStarted } = props;
  // Mutable on purpose: a new chat learns its session id on its first send, without a re-render.
  const [choices, setChoices] = useState<ChatChoices>({ temporary: false });
  const [session] = useState(() => new SessionHolder(api, props.sessionId, onSessionStarted));
  // Read when the first send starts the session, not when the chat was shown.
  useEffect(
    () => session.startWith(sessionStartOf(choices, props.projectId)),
    [session, choices, props.projectId],
  );
  const [chatId] = useState(() => props.sessionId ?? crypto.randomUUID());
  const [actionError, setActionError] = useState<unknown>(undefined);
  const composerRef = useRef<HTMLTextAreaElement>(null);
  // The `error` event that ended the latest turn this page sent (a stored failed turn carries its own).
  const [liveFailure, setLiveFailure] = useState<TurnFailure | undefined>(undefined);

  const transport = useMemo(
    () =>
      new WebPubSubChatTransport({
        api,
        session,
        onTurnError: setLiveFailure,
      }),
    [api, session],
  );
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
      // The header was updated before the stream ended, with or without an answer: the list counts the turn.
      const sessionId = session.current();
      if (sessionId !== undefined) turnEnded(sessionId);
    },
  });
  const { messages, setMessages, status, error } = chat;
  const busy = status === 'submitted' || status === 'streaming';
  // A turn that ended with an `error` event is shown under its message, with Retry; not as a dropped connection.
  const lastUserId = messages.findLast((message) => message.role === 'user')?.id;
  const lastFailed = liveFailure !== undefined && lastUserId !== undefined;
  const thoughtSeconds = useThoughtTime(messages, busy);
  const { logRef, contentRef, atBottom, jumpToLatest } = useStickToBottom();

  // While a turn is answered its question is kept for a reload (history has it once the answer has ended).
  const lastUser = messages.findLast((message) => message.role === 'user');
  useEffect(() => {
    const sessionId = session.current();
    if (sessionId === undefined) return;
    if (busy && lastUser !== undefined) rememberPending(sessionId, lastUser);
    else if (!busy) forgetPending(sessionId);
  }, [busy, status, lastUser, session]);

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
          setMessages((shown) => keepShown(stored, shown));
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
    if (status !== 'error' || error instanceof ApiError || lastFailed || session.current() === undefined)
      return;
    if (resumeAttempts.current >= 20) return;
    const timer = setTimeout(() => {
      resumeAttempts.current += 1;
      chat.clearError();
      void chat.resumeStream().then(() => reload());
    }, 1_500);
    return () => clearTimeout(timer);
  }, [status, error, chat, reload, session, lastFailed]);

  const focusComposer = (): void => composerRef.current?.focus();
  useInitialFocus(composerRef);

  const modelBody = (): { model?: string } => (choices.model === undefined ? {} : { model: choices.model });
  const send = (text: string, useMemory: boolean, files: File[] = []): void => {
    setActionError(undefined);
    setLiveFailure(undefined);
    resumeAttempts.current = 0;
    jumpToLatest();
    void preloadMarkdown();
    const metadata = useMemory ? {} : { useMemory: false };
    // A file over the direct-upload size goes to Blob Storage first; the others travel in the message.
    void messageFileParts(api, files, attachmentRules).then(
      (parts) =>
        chat.sendMessage(
          { text, metadata, ...(parts.length > 0 ? { files: parts } : {}) },
          { body: modelBody() },
        ),
      (error: unknown) => setActionError(error instanceof Error ? error.message : String(error)),
    );
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

  // Escape stops the answer, as in the chat apps people know (unless a dialog is open: Escape closes that).
  const onEscape = useEffectEvent(() => void stop());
  useEffect(() => {
    if (!busy) return;
    const onKeyDown = (event: KeyboardEvent): void => {
      if (event.key !== 'Escape' || event.defaultPrevented) return;
      if (document.querySelector('[role="dialog"], [role="alertdialog"]') !== null) return;
      event.preventDefault();
      onEscape();
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [busy]);

  /** Sends `text` in place of `message`: the conversation branches there (an edit, or a failed turn retried). */
  const replace = (message: ChatUIMessage, text: string): void => {
    setActionError(undefined);
    setLiveFailure(undefined);
    resumeAttempts.current = 0;
    const index = messages.findIndex((candidate) => candidate.id === message.id);
    setMessages(messages.slice(0, Math.max(0, index)));
    jumpToLatest();
    void preloadMarkdown();
    const metadata = message.metadata?.useMemory === false ? { useMemory: false } : {};
    void chat.sendMessage({ text, metadata }, { body: { editOf: turnOf(message), ...modelBody() } });
    focusComposer();
  };

  // Kept stable, so a shown image is read once rather than at each render.
  const attachmentRules = useAttachmentRules(api);
  const readStored = useCallback((attachmentId: string) => readAttachment(api, attachmentId), [api]);
  const actions = {
    busy,
    onRegenerate: (message: ChatUIMessage) => {
      setActionError(undefined);
      setLiveFailure(undefined);
      jumpToLatest();
      void preloadMarkdown();
      void chat.regenerate({ messageId: message.id, body: modelBody() });
      focusComposer();
    },
    readDocument: (documentId: string) =>
      api
        .json<{ document: CitedDocument }>(
          'GET',
          `/api/knowledge/documents/${encodeURIComponent(documentId)}`,
        )
        .then((reply) => reply.document),
    readAttachment: readStored,
    answerApproval: approvalsOf(api, session),
    onConnect: (serverId: string) => void connectMcpServer(api, serverId).catch(setActionError),
    onRate: (message: ChatUIMessage, rating: 'up' | 'down' | null) => {
      const sessionId = session.current();
      if (sessionId === undefined) return;
      setActionError(undefined);
      const show = (feedback: 'up' | 'down' | undefined) =>
        setMessages((shown) =>
          shown.map((candidate) => {
            if (candidate.id !== message.id) return candidate;
            const { feedback: _previous, ...metadata } = candidate.metadata ?? {};
            return { ...candidate, metadata: feedback === undefined ? metadata : { ...metadata, feedback } };
          }),
        );
      const before = message.metadata?.feedback;
      // Shown at once; put back as it was if history refuses it.
      show(rating ?? undefined);
      rateAnswer(api, sessionId, turnOf(message), rating).then(show, (rateError: unknown) => {
        show(before);
        setActionError(rateError);
      });
    },
    onEdit: replace,
    onRetry: (message: ChatUIMessage) => replace(message, messageText(message)),
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

  // A failed turn's error shows under its message; an answer refused at the door (an ApiError) shows here.
  const shownError = actionError ?? (error instanceof ApiError ? error : undefined);
  return (
    <section className="flex h-full min-h-0 flex-col" aria-label="Chat">
      <div className="relative min-h-0 flex-1">
        <div
          className="h-full overflow-y-auto overscroll-contain"
          ref={logRef}
          role="log"
          aria-label="Messages"
          aria-live="polite"
        >
          <div
            ref={contentRef}
            className="mx-auto flex min-h-full w-full max-w-3xl flex-col gap-4 p-3 sm:p-4"
          >
            {messages.length === 0 && (
              <EmptyState
                disabled={busy}
                onStart={(text) => send(text, true)}
                {...(choices.assistant === undefined ? {} : { assistant: choices.assistant })}
              />
            )}
            {messages.map((message, index) => (
              <MessageView
                key={message.id}
                message={message}
                streaming={busy && index === messages.length - 1 && message.role === 'assistant'}
                actions={actions}
                extras={extrasOf(message)}
              />
            ))}
            {status === 'submitted' && (
              <p className="muted m-0" role="status">
                Thinking…
              </p>
            )}
          </div>
        </div>
        {atBottom ? null : (
          <button
            type="button"
            className="btn absolute bottom-3 left-1/2 -translate-x-1/2 rounded-full shadow-md"
            onClick={() => jumpToLatest(true)}
          >
            <ArrowDown size={16} aria-hidden />
            Jump to latest
          </button>
        )}
      </div>
      {shownError !== undefined && (
        <p className="alert mx-auto mb-2 w-[calc(100%-1rem)] max-w-3xl" role="alert">
          {describeError(shownError)}
        </p>
      )}
      {status === 'error' && shownError === undefined && !lastFailed && (
        <p className="alert mx-auto mb-2 w-[calc(100%-1rem)] max-w-3xl" role="status">
          The connection dropped; reconnecting…
        </p>
      )}
      <ChatOptions
        api={api}
        isNew={messages.length === 0 && session.current() === undefined}
        choices={choices}
        onChange={setChoices}
      />
      <Composer
        inputRef={composerRef}
        busy={busy}
        rules={attachmentRules}
        onSend={send}
        onStop={() => void stop()}
      />
    </section>
  );

  function extrasOf(message: ChatUIMessage): MessageExtras {
    const failure = message.id === lastUserId ? liveFailure : undefined;
    // Measured here while it streamed, else as history kept it.
    const kept = message.metadata?.reasoningMs;
    const seconds = thoughtSeconds.get(message.id) ?? (kept === undefined ? undefined : kept / 1000);
    return {
      ...(failure === undefined ? {} : { failure }),
      ...(seconds === undefined ? {} : { thoughtSeconds: seconds }),
    };
  }
}
