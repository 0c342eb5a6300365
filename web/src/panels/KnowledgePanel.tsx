// The knowledge panel: upload a document (with its progress), follow its status until it is ready or failed
// (with the reason), delete it, and switch between the private and the shared library. A quota's 429 says
// which limit and when to retry.
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { describeError } from '../api/client';
import type { ApiClient } from '../api/client';
import { useIdentity } from '../auth/identity';
import type { DocumentsPage, KnowledgeDocument, LibraryName } from './api-types';
import { shortDate } from './api-types';
import { AskFirstButton, ConfirmDialog } from './ConfirmDialog';
import type { ConfirmRequest } from './ConfirmDialog';
import { uploadDocument } from './upload';
import { PanelNotices } from './PanelNotices';

const PAGE_SIZE = 50;
/** Polling while a document is indexed starts quick and slows down, so a long PDF costs few requests. */
const FIRST_POLL_MS = 1_000;
const MAX_POLL_MS = 8_000;
const ACCEPT = '.md,.markdown,.txt,.html,.htm,.pdf,text/markdown,text/plain,text/html,application/pdf';

interface Upload {
  name: string;
  fraction: number;
}

export function KnowledgePanel(props: { api: ApiClient; apiBase?: string }): ReactNode {
  const { api, apiBase = '' } = props;
  const identity = useIdentity();
  const [library, setLibrary] = useState<LibraryName>('private');
  const [documents, setDocuments] = useState<KnowledgeDocument[]>([]);
  const [nextToken, setNextToken] = useState<string | undefined>(undefined);
  const [upload, setUpload] = useState<Upload | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [status, setStatus] = useState('');
  const [confirm, setConfirm] = useState<ConfirmRequest | undefined>(undefined);
  const [pollDelay, setPollDelay] = useState(FIRST_POLL_MS);
  const fileInput = useRef<HTMLInputElement>(null);
  const groupName = useId();

  const [reloads, setReloads] = useState(0);

  const fetchPage = useCallback(
    (token?: string) => {
      const params = new URLSearchParams({ library, limit: String(PAGE_SIZE) });
      if (token !== undefined) params.set('continuationToken', token);
      return api.json<DocumentsPage>('GET', `/api/knowledge/documents?${params.toString()}`);
    },
    [api, library],
  );

  // The first page, again whenever the library changes or an upload lands in it; older pages stay as loaded.
  useEffect(() => {
    let live = true;
    fetchPage().then(
      (page) => {
        if (!live) return;
        setDocuments((previous) => withFresh(previous, page.documents));
        setNextToken((token) => token ?? page.continuationToken);
      },
      (failure: unknown) => {
        if (live) setError(describeError(failure));
      },
    );
    return () => {
      live = false;
    };
  }, [fetchPage, reloads]);

  const showLibrary = (name: LibraryName) => {
    setDocuments([]);
    setNextToken(undefined);
    setPollDelay(FIRST_POLL_MS);
    setLibrary(name);
  };

  const loadMore = async (token: string) => {
    try {
      const page = await fetchPage(token);
      setDocuments((previous) => [...previous, ...page.documents]);
      setNextToken(page.continuationToken);
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  // While a document is queued or processing, its status is asked again, less and less often.
  const pending = documents.filter((document) => !isFinal(document));
  const pendingIds = pending.map((document) => document.documentId).join(',');
  useEffect(() => {
    if (pendingIds === '') return;
    let live = true;
    const timer = window.setTimeout(() => {
      fetchPage().then(
        (page) => {
          if (!live) return;
          const settled = page.documents.filter(
            (document) => isFinal(document) && pendingIds.split(',').includes(document.documentId),
          );
          if (settled.length > 0)
            setStatus(settled.map((document) => `${document.title}: ${statusLabel(document)}`).join('. '));
          setDocuments((previous) => withFresh(previous, page.documents));
          setPollDelay((delay) => Math.min(delay * 2, MAX_POLL_MS));
        },
        (failure: unknown) => {
          if (live) setError(describeError(failure));
        },
      );
    }, pollDelay);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [fetchPage, pendingIds, pollDelay]);

  const send = async (file: File) => {
    if (identity === undefined) return;
    setError(undefined);
    setUpload({ name: file.name, fraction: 0 });
    try {
      const document = await uploadDocument(file, {
        headers: await identity.headers(),
        base: apiBase,
        onProgress: (fraction) => setUpload({ name: file.name, fraction }),
      });
      setStatus(`${document.title} uploaded: ${document.status}.`);
      setPollDelay(FIRST_POLL_MS);
      // The upload lands in the library the server chose for this user; show that one.
      if (document.library !== library) showLibrary(document.library);
      else setReloads((count) => count + 1);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setUpload(undefined);
      if (fileInput.current !== null) fileInput.current.value = '';
    }
  };

  const remove = async (document: KnowledgeDocument) => {
    try {
      await api.json('DELETE', `/api/knowledge/documents/${encodeURIComponent(document.documentId)}`);
      setDocuments((previous) => previous.filter((item) => item.documentId !== document.documentId));
      setStatus(`${document.title} deleted.`);
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  return (
    <section className="panel" aria-labelledby="knowledge-heading">
      <div className="panel-heading">
        <h2 id="knowledge-heading">Knowledge</h2>
      </div>
      <fieldset className="m-0 flex flex-wrap gap-3 rounded-lg border border-line px-3 py-1.5">
        <legend>Library</legend>
        {(['private', 'shared'] as const).map((name) => (
          <label key={name}>
            <input
              type="radio"
              name={groupName}
              value={name}
              checked={library === name}
              onChange={() => showLibrary(name)}
            />
            {name === 'private' ? 'My documents' : 'Shared library'}
          </label>
        ))}
      </fieldset>
      <div className="flex flex-col gap-1 text-sm">
        <label htmlFor="knowledge-upload">Upload a document (Markdown, text, HTML or PDF)</label>
        <input
          id="knowledge-upload"
          ref={fileInput}
          type="file"
          accept={ACCEPT}
          disabled={upload !== undefined || identity === undefined}
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file !== undefined) void send(file);
          }}
        />
        {upload === undefined ? null : (
          <div className="[&_progress]:w-full">
            <label htmlFor="knowledge-upload-progress">Uploading {upload.name}</label>
            <progress id="knowledge-upload-progress" max={1} value={upload.fraction}>
              {Math.round(upload.fraction * 100)}%
            </progress>
          </div>
        )}
      </div>
      <PanelNotices status={status} error={error} />
      {documents.length === 0 ? (
        <p className="muted">
          {library === 'private' ? 'No documents yet.' : 'The shared library is empty.'}
        </p>
      ) : (
        <ul className="panel-list" aria-label={library === 'private' ? 'My documents' : 'Shared library'}>
          {documents.map((document) => (
            <li key={document.documentId} className="panel-item">
              <div className="font-semibold">{document.title}</div>
              <div className="panel-meta">
                {document.format.toUpperCase()} · {formatBytes(document.bytes)} ·{' '}
                {shortDate(document.createdAt)}
                {document.chunkCount === undefined ? '' : ` · ${document.chunkCount} passages`}
              </div>
              <div
                className="group my-1 flex flex-wrap items-baseline gap-1.5 text-sm"
                data-status={document.status}
              >
                <span className="status-badge rounded-full border border-line px-2 group-data-[status=failed]:text-danger group-data-[status=ready]:border-accent group-data-[status=ready]:text-accent">
                  {statusLabel(document)}
                </span>
                {document.failure === undefined ? null : (
                  <span className="text-danger">{document.failure.reason}</span>
                )}
              </div>
              {document.ownedByYou ? (
                <AskFirstButton
                  label="Delete"
                  ariaLabel={`Delete ${document.title}`}
                  ask={setConfirm}
                  request={{
                    title: 'Delete this document?',
                    message: `"${document.title}" and its passages will be removed; answers will no longer cite it.`,
                    onConfirm: () => void remove(document),
                  }}
                />
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {nextToken === undefined ? null : (
        <button type="button" className="btn btn-quiet btn-small" onClick={() => void loadMore(nextToken)}>
          Show more documents
        </button>
      )}
      <ConfirmDialog request={confirm} onClose={() => setConfirm(undefined)} />
    </section>
  );
}

function isFinal(document: KnowledgeDocument): boolean {
  return document.status === 'ready' || document.status === 'failed';
}

/** The first page as fetched now, then the older pages loaded before, without the ones it holds or deleted. */
function withFresh(previous: KnowledgeDocument[], firstPage: KnowledgeDocument[]): KnowledgeDocument[] {
  const fresh = new Set(firstPage.map((document) => document.documentId));
  const oldestOfPage = firstPage.at(-1)?.createdAt;
  const older = previous.filter(
    (document) =>
      !fresh.has(document.documentId) && oldestOfPage !== undefined && document.createdAt < oldestOfPage,
  );
  return [...firstPage, ...older];
}

function statusLabel(document: KnowledgeDocument): string {
  switch (document.status) {
    case 'queued':
      return 'Queued';
    case 'processing':
      return 'Processing…';
    case 'ready':
      return 'Ready';
    case 'failed':
      return 'Failed';
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
