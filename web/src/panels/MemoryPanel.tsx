// What the assistant remembers about the user: each fact with the conversation it came from (title, a link to
// open it, when) and where it lives (moved with a select), the conversations' summaries, and forgetting.
import { useCallback, useEffect, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { ApiError, describeError } from '../api/client';
import type { ApiClient } from '../api/client';
import type { ConversationSummary, FactSource, MemoriesPage, MemorySummary, ProfileFact } from './api-types';
import { shortDate } from './api-types';
import { AskFirstButton, ConfirmDialog } from './ConfirmDialog';
import { onMemoryChanged } from '../transport/memory-changes';
import type { ConfirmRequest } from './ConfirmDialog';
import { FactScopeSelect, scopeLabel, useScopeOptions } from './FactScopeSelect';
import { PanelNotices } from './PanelNotices';

const SUMMARY_PAGE = 20;
/** What a source's title is while it is fetched, and once its conversation is found deleted. */
const DELETED = '(a deleted conversation)';

export interface MemoryPanelProps {
  api: ApiClient;
  /** Opens a conversation a memory came from in the chat. */
  onOpen: (sessionId: string) => void;
  /** Changes when the user switches conversations: a finished conversation may have taught something. */
  activeSessionId?: string | undefined;
}

export function MemoryPanel(props: MemoryPanelProps): ReactNode {
  const { api, onOpen, activeSessionId } = props;
  const [facts, setFacts] = useState<ProfileFact[]>([]);
  const [summaries, setSummaries] = useState<MemorySummary[]>([]);
  const [nextToken, setNextToken] = useState<string | undefined>(undefined);
  const [titles, setTitles] = useState<ReadonlyMap<string, string>>(new Map());
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | undefined>(undefined);
  const [status, setStatus] = useState('');
  const [confirm, setConfirm] = useState<ConfirmRequest | undefined>(undefined);
  const asked = useRef(new Set<string>());
  const memoriesPath = `/api/memory/users/${encodeURIComponent(api.userId)}/memories`;

  const [reloads, setReloads] = useState(0);
  // The memory worker says when a turn changed memory: the panel shows it without "Refresh memory".
  useEffect(() => onMemoryChanged(() => setReloads((count) => count + 1)), []);
  const scopeOptions = useScopeOptions(api, reloads);

  const fetchPage = useCallback(
    (token: string | undefined) => {
      const params = new URLSearchParams({ status: 'active', limit: String(SUMMARY_PAGE) });
      if (token !== undefined) params.set('continuationToken', token);
      return api.json<MemoriesPage>('GET', `${memoriesPath}?${params.toString()}`);
    },
    [api, memoriesPath],
  );

  // Facts come whole on every page; summaries a page at a time.
  const apply = useCallback((page: MemoriesPage, append: boolean) => {
    setFacts(page.facts.filter((fact) => fact.status === 'active'));
    setSummaries((previous) => (append ? [...previous, ...page.summaries] : page.summaries));
    setNextToken(page.continuationToken);
    setError(undefined);
    setLoading(false);
  }, []);

  // Reloaded when the user switches conversations (a finished one may have taught something) or asks.
  useEffect(() => {
    let live = true;
    fetchPage(undefined).then(
      (page) => {
        if (live) apply(page, false);
      },
      (failure: unknown) => {
        if (!live) return;
        setError(describeError(failure));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [fetchPage, apply, activeSessionId, reloads]);

  const refresh = () => {
    setLoading(true);
    setReloads((count) => count + 1);
  };

  const loadMore = async (token: string) => {
    setLoading(true);
    try {
      apply(await fetchPage(token), true);
    } catch (failure) {
      setError(describeError(failure));
      setLoading(false);
    }
  };

  // The title of each conversation a memory names, asked once per conversation.
  useEffect(() => {
    const wanted = new Set([
      ...facts.flatMap((fact) => fact.provenance.map((source) => source.sessionId)),
      ...summaries.map((summary) => summary.sessionId),
    ]);
    for (const sessionId of wanted) {
      if (asked.current.has(sessionId)) continue;
      asked.current.add(sessionId);
      api
        .json<ConversationSummary>(
          'GET',
          `/api/history/conversations/${encodeURIComponent(sessionId)}?limit=1`,
        )
        .then(
          (conversation) => conversation.title,
          (failure: unknown) => (failure instanceof ApiError && failure.status === 404 ? DELETED : undefined),
        )
        .then((title) => {
          if (title === undefined) asked.current.delete(sessionId);
          else setTitles((previous) => new Map(previous).set(sessionId, title));
        })
        .catch(() => undefined);
    }
  }, [api, facts, summaries]);

  const forget = async (query: string, done: string) => {
    try {
      await api.json('DELETE', `${memoriesPath}${query}`);
      setStatus(done);
      refresh();
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  const move = async (fact: ProfileFact, scope: string, label: string) => {
    try {
      await api.json('PATCH', `${memoriesPath}/${encodeURIComponent(fact.factId)}`, { scope });
      setStatus(`Moved to ${label}: ${fact.statement}`);
      refresh();
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  const titleOf = (sessionId: string) => titles.get(sessionId) ?? 'a conversation';

  const forgetConversation = (sessionId: string) =>
    setConfirm({
      title: 'Forget this conversation?',
      message: `The summary of "${titleOf(sessionId)}" and the facts learned only from it will be forgotten. The conversation itself stays in your history.`,
      confirmLabel: 'Forget',
      onConfirm: () =>
        void forget(
          `?sessionId=${encodeURIComponent(sessionId)}`,
          `Forgot what "${titleOf(sessionId)}" taught.`,
        ),
    });

  return (
    <section className="panel" aria-labelledby="memory-heading">
      <div className="panel-heading">
        <h2 id="memory-heading">Memory</h2>
        <button type="button" className="btn btn-quiet btn-small" disabled={loading} onClick={refresh}>
          Refresh memory
        </button>
      </div>
      <PanelNotices status={status} error={error} />
      <h3 id="facts-heading">What I remember about you</h3>
      {facts.length === 0 ? (
        <p className="muted">
          {loading ? 'Loading…' : 'Nothing yet: facts you tell the assistant show up here.'}
        </p>
      ) : (
        <ul className="panel-list" aria-labelledby="facts-heading">
          {facts.map((fact) => (
            <li key={fact.factId} className="panel-item">
              <p className="m-0 mb-1">{fact.statement}</p>
              <p className="panel-meta mb-1 flex flex-wrap gap-x-2.5 gap-y-1">
                <span className="font-semibold">{categoryLabel(fact.category)}</span>
                <FactScopeSelect
                  factId={fact.factId}
                  statement={fact.statement}
                  scope={fact.scope}
                  options={scopeOptions}
                  disabled={loading}
                  onMove={(scope, label) => void move(fact, scope, label)}
                />
                {fact.provenance.slice(-3).map((source) => (
                  <SourceLink
                    key={`${source.sessionId}:${source.chatMessageId}`}
                    source={source}
                    title={titles.get(source.sessionId)}
                    onOpen={onOpen}
                  />
                ))}
              </p>
              <AskFirstButton
                label="Forget"
                ariaLabel={`Forget: ${fact.statement}`}
                ask={setConfirm}
                request={{
                  title: 'Forget this fact?',
                  message: `"${fact.statement}" will no longer be used in your conversations.`,
                  onConfirm: () =>
                    void forget(`?factId=${encodeURIComponent(fact.factId)}`, `Forgot: ${fact.statement}`),
                }}
              />
            </li>
          ))}
        </ul>
      )}
      <h3 id="summaries-heading">Conversations I remember</h3>
      {summaries.length === 0 ? (
        <p className="muted">{loading ? 'Loading…' : 'No conversation summarised yet.'}</p>
      ) : (
        <ul className="panel-list" aria-labelledby="summaries-heading">
          {summaries.map((summary) => (
            <li key={summary.sessionId} className="panel-item">
              <p className="panel-meta mb-1">
                <a
                  href={`#conversation-${summary.sessionId}`}
                  onClick={(event) => {
                    event.preventDefault();
                    onOpen(summary.sessionId);
                  }}
                >
                  {titles.get(summary.sessionId) ?? 'Open the conversation'}
                </a>{' '}
                · <time dateTime={summary.timestamp}>{shortDate(summary.timestamp)}</time>
              </p>
              <p className="m-0 mb-1">{summary.summary}</p>
              <p className="panel-meta mb-1">Lives in: {scopeLabel(summary.scope, scopeOptions)}</p>
              {summary.themes.length === 0 ? null : (
                <p className="panel-meta">Themes: {summary.themes.join(', ')}</p>
              )}
              <button
                type="button"
                className="btn btn-quiet btn-small"
                aria-label={`Forget this conversation: ${titleOf(summary.sessionId)}`}
                onClick={() => forgetConversation(summary.sessionId)}
              >
                Forget this conversation
              </button>
            </li>
          ))}
        </ul>
      )}
      {nextToken === undefined ? null : (
        <button
          type="button"
          className="btn btn-quiet btn-small"
          disabled={loading}
          onClick={() => void loadMore(nextToken)}
        >
          Show older summaries
        </button>
      )}
      <div className="mt-3">
        <button
          type="button"
          className="btn btn-danger"
          disabled={facts.length === 0 && summaries.length === 0}
          onClick={() =>
            setConfirm({
              title: 'Forget everything?',
              message:
                'Every fact and every conversation summary the assistant keeps about you will be forgotten. Your conversations stay in your history.',
              confirmLabel: 'Forget everything',
              onConfirm: () => void forget('', 'Forgot everything.'),
            })
          }
        >
          Forget everything
        </button>
      </div>
      <ConfirmDialog request={confirm} onClose={() => setConfirm(undefined)} />
    </section>
  );
}

function SourceLink(props: {
  source: FactSource;
  title: string | undefined;
  onOpen: (sessionId: string) => void;
}): ReactNode {
  const { source, title, onOpen } = props;
  const deleted = title === DELETED;
  return (
    <span>
      {'from '}
      {deleted ? (
        <span>{title}</span>
      ) : (
        <a
          href={`#conversation-${source.sessionId}`}
          onClick={(event) => {
            event.preventDefault();
            onOpen(source.sessionId);
          }}
        >
          {title ?? 'a conversation'}
        </a>
      )}
      {', '}
      <time dateTime={source.at}>{shortDate(source.at)}</time>
    </span>
  );
}

function categoryLabel(category: string): string {
  const words = category.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
