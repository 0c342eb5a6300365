// The conversations sidebar: the caller's conversations newest first in date groups, a page at a time, searchable;
// open one, rename it, download it as Markdown, delete it (after a confirmation), or start a new chat.
import { Download, Pencil, Plus, Trash2 } from 'lucide-react';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { describeError } from '../api/client';
import type { ApiClient } from '../api/client';
import type { ConversationPage, ConversationSummary } from './api-types';
import { messagesLabel, shortDate } from './api-types';
import { onTurnEnded } from '../chat/turn-ends';
import { ConfirmDialog } from './ConfirmDialog';
import type { ConfirmRequest } from './ConfirmDialog';
import { groupByDate } from './date-groups';
import { downloadConversation } from './download-conversation';

const PAGE_SIZE = 20;
/** Typing pauses this long before a search is sent, so a word is one request, not one per letter. */
const SEARCH_DELAY_MS = 300;
const NEW_CHAT_RETRIES = 5;

export interface ConversationSidebarProps {
  api: ApiClient;
  activeSessionId: string | undefined;
  onOpen: (sessionId: string) => void;
  onNew: () => void;
  /** Told the open conversation's title whenever the list knows it (the tab's title follows it). */
  onTitle?: (title: string | undefined) => void;
  /** Lists only this project's conversations. */
  projectId?: string | undefined;
}

export function ConversationSidebar(props: ConversationSidebarProps): ReactNode {
  const { api, activeSessionId, onOpen, onNew, onTitle, projectId } = props;
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');
  const [items, setItems] = useState<ConversationSummary[]>([]);
  const [nextToken, setNextToken] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | undefined>(undefined);
  const [renaming, setRenaming] = useState<string | undefined>(undefined);
  // Where focus goes once the list has re-rendered: back on a renamed conversation, or to the search after a delete.
  const focusAfter = useRef<{ sessionId: string } | 'search' | undefined>(undefined);
  const searchInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const target = focusAfter.current;
    if (target === undefined) return;
    focusAfter.current = undefined;
    if (target === 'search') searchInput.current?.focus();
    else document.getElementById(`conversation-${target.sessionId}`)?.focus();
  });
  const [confirm, setConfirm] = useState<ConfirmRequest | undefined>(undefined);
  const activeTitle = items.find((item) => item.sessionId === activeSessionId)?.title;
  useEffect(() => {
    if (activeTitle !== undefined || activeSessionId === undefined) onTitle?.(activeTitle);
  }, [activeTitle, activeSessionId, onTitle]);
  const listPath = `/api/history/users/${encodeURIComponent(api.userId)}/conversations`;

  const fetchPage = useCallback(
    (token: string | undefined) => {
      const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (search !== '') params.set('q', search);
      if (projectId !== undefined) params.set('projectId', projectId);
      if (token !== undefined) params.set('continuationToken', token);
      return api.json<ConversationPage>('GET', `${listPath}?${params.toString()}`);
    },
    [api, listPath, search, projectId],
  );

  const loadMore = async (token: string) => {
    setLoading(true);
    try {
      const page = await fetchPage(token);
      setItems((previous) => [...previous, ...page.conversations]);
      setNextToken(page.continuationToken);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    const timer = window.setTimeout(() => setSearch(query.trim()), SEARCH_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [query]);

  // Asked again after each turn that ended here: its conversation's count and preview changed.
  const [turnsEnded, setTurnsEnded] = useState(0);
  useEffect(() => onTurnEnded(() => setTurnsEnded((count) => count + 1)), []);

  // A new chat shows up (and a conversation's title settles) when the active conversation changes. An answer
  // to an older search, or for another user, is dropped.
  useEffect(() => {
    let live = true;
    let timer: number | undefined;
    // A new chat is listed once its first answer is committed: until then the list is asked again, less and less
    // often (about half a minute in all).
    const fetchFirst = (attempt: number) => {
      fetchPage(undefined).then(
        (page) => {
          if (!live) return;
          setItems(page.conversations);
          setNextToken(page.continuationToken);
          setError(undefined);
          setLoading(false);
          const listed = page.conversations.some((item) => item.sessionId === activeSessionId);
          if (activeSessionId !== undefined && search === '' && !listed && attempt < NEW_CHAT_RETRIES)
            timer = window.setTimeout(() => fetchFirst(attempt + 1), 1_000 * 2 ** attempt);
        },
        (failure: unknown) => {
          if (!live) return;
          setError(describeError(failure));
          setLoading(false);
        },
      );
    };
    fetchFirst(0);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [fetchPage, activeSessionId, search, turnsEnded]);

  const rename = async (sessionId: string, title: string) => {
    try {
      const updated = await api.json<ConversationSummary>(
        'PUT',
        `/api/history/conversations/${encodeURIComponent(sessionId)}/title`,
        { title },
      );
      setItems((previous) =>
        previous.map((item) => (item.sessionId === sessionId ? { ...item, ...updated } : item)),
      );
      setRenaming(undefined);
      focusAfter.current = { sessionId };
      setError(undefined);
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  const remove = async (conversation: ConversationSummary) => {
    try {
      await api.json('DELETE', `/api/history/conversations/${encodeURIComponent(conversation.sessionId)}`);
      setItems((previous) => previous.filter((item) => item.sessionId !== conversation.sessionId));
      focusAfter.current = 'search';
      setError(undefined);
      if (conversation.sessionId === activeSessionId) onNew();
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  const item = (conversation: ConversationSummary) => (
    <li
      key={conversation.sessionId}
      className="group relative rounded-lg hover:bg-raised has-[[aria-current=page]]:bg-raised"
    >
      {renaming === conversation.sessionId ? (
        <RenameForm
          conversation={conversation}
          onSave={(title) => void rename(conversation.sessionId, title)}
          onCancel={() => {
            setRenaming(undefined);
            focusAfter.current = { sessionId: conversation.sessionId };
          }}
        />
      ) : (
        <>
          <button
            type="button"
            className="flex w-full min-w-0 flex-col items-start rounded-lg px-2 py-1.5 pr-24 text-left aria-[current=page]:font-semibold aria-[current=page]:shadow-[inset_3px_0_0_var(--accent)]"
            id={`conversation-${conversation.sessionId}`}
            aria-current={conversation.sessionId === activeSessionId ? 'page' : undefined}
            onClick={() => onOpen(conversation.sessionId)}
          >
            <span className="conversation-title line-clamp-2 text-sm [overflow-wrap:anywhere]">
              {conversation.title}
            </span>
            <span className="panel-meta">
              {shortDate(conversation.lastActivity)} · {messagesLabel(conversation.visibleMessageCount)}
            </span>
          </button>
          {/* Shown on hover or focus where there is a pointer that hovers; always on a touch screen. */}
          <div className="absolute top-1 right-1 flex gap-0.5 [@media(hover:hover)]:opacity-0 [@media(hover:hover)]:group-focus-within:opacity-100 [@media(hover:hover)]:group-hover:opacity-100">
            <button
              type="button"
              className="btn btn-quiet btn-icon size-7"
              aria-label={`Rename ${conversation.title}`}
              title="Rename"
              onClick={() => setRenaming(conversation.sessionId)}
            >
              <Pencil size={14} aria-hidden />
            </button>
            <button
              type="button"
              className="btn btn-quiet btn-icon size-7"
              aria-label={`Download ${conversation.title}`}
              title="Download as Markdown"
              onClick={() =>
                void downloadConversation(api, conversation.sessionId).then(
                  () => setError(undefined),
                  (failure: unknown) => setError(describeError(failure)),
                )
              }
            >
              <Download size={14} aria-hidden />
            </button>
            <button
              type="button"
              className="btn btn-quiet btn-icon size-7"
              aria-label={`Delete ${conversation.title}`}
              title="Delete"
              onClick={() =>
                setConfirm({
                  title: 'Delete this conversation?',
                  message: `"${conversation.title}" and everything remembered only from it will be deleted. This cannot be undone.`,
                  confirmLabel: 'Delete',
                  onConfirm: () => void remove(conversation),
                })
              }
            >
              <Trash2 size={14} aria-hidden />
            </button>
          </div>
        </>
      )}
    </li>
  );

  return (
    <section className="panel" aria-labelledby="conversations-heading">
      <div className="panel-heading">
        <h2 id="conversations-heading">Conversations</h2>
        <button type="button" className="btn btn-primary" onClick={onNew}>
          <Plus size={16} aria-hidden />
          New conversation
        </button>
      </div>
      <form
        role="search"
        className="flex flex-col gap-1 text-sm"
        onSubmit={(event) => event.preventDefault()}
      >
        <label htmlFor="conversation-search">Search conversations</label>
        <input
          id="conversation-search"
          ref={searchInput}
          type="search"
          className="min-w-0"
          value={query}
          maxLength={200}
          onChange={(event) => setQuery(event.target.value)}
        />
      </form>
      {error === undefined ? null : (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
      <div aria-busy={loading} className="flex flex-col gap-3">
        {groupByDate(items, (conversation) => conversation.lastActivity).map(({ group, items: grouped }) => (
          <section key={group} aria-label={group}>
            <h3 className="mt-0 mb-1 px-2 text-xs font-medium text-muted-foreground">{group}</h3>
            <ul className="panel-list gap-0.5">{grouped.map(item)}</ul>
          </section>
        ))}
      </div>
      {!loading && items.length === 0 && error === undefined ? (
        <p className="muted">
          {search === '' ? 'No conversations yet.' : `No conversation matches "${search}".`}
        </p>
      ) : null}
      {nextToken === undefined ? null : (
        <button
          type="button"
          className="btn btn-quiet"
          disabled={loading}
          onClick={() => void loadMore(nextToken)}
        >
          {loading ? 'Loading…' : 'Show older conversations'}
        </button>
      )}
      <ConfirmDialog request={confirm} onClose={() => setConfirm(undefined)} />
    </section>
  );
}

function RenameForm(props: {
  conversation: ConversationSummary;
  onSave: (title: string) => void;
  onCancel: () => void;
}): ReactNode {
  const [title, setTitle] = useState(props.conversation.title);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = title.trim();
    if (trimmed === '' || trimmed === props.conversation.title) props.onCancel();
    else props.onSave(trimmed);
  };
  return (
    <form className="flex flex-wrap gap-1 p-1" onSubmit={submit}>
      <label htmlFor={`rename-${props.conversation.sessionId}`} className="sr-only">
        New title
      </label>
      <input
        id={`rename-${props.conversation.sessionId}`}
        ref={input}
        className="min-w-0 flex-[1_1_8rem]"
        value={title}
        maxLength={200}
        onChange={(event) => setTitle(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Escape') props.onCancel();
        }}
      />
      <button type="submit" className="btn btn-small">
        Save
      </button>
      <button type="button" className="btn btn-quiet btn-small" onClick={props.onCancel}>
        Cancel
      </button>
    </form>
  );
}
