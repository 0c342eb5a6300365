// An answer's numbered sources: each chip opens on the cited passage, and on what the knowledge base knows of its
// document (file, pages, library), read when first opened; a document deleted since says so.
import { useState } from 'react';
import type { ReactNode } from 'react';
import { ApiError, describeError } from '../api/client';
import { citationLabel, sourceDetails } from './messages';

/** A document as GET /api/knowledge/documents/{documentId} shows it (the fields a chip shows). */
export interface CitedDocument {
  title: string;
  fileName?: string;
  pageCount?: number;
  library: string;
}

export type ReadDocument = (documentId: string) => Promise<CitedDocument>;

interface SourcePart {
  sourceId: string;
  title?: string;
  providerMetadata?: unknown;
}

type Loaded =
  { state: 'loading' } | { state: 'read'; document: CitedDocument } | { state: 'failed'; why: string };

function DocumentLine(props: { loaded: Loaded | undefined }): ReactNode {
  const { loaded } = props;
  if (loaded === undefined || loaded.state === 'loading')
    return <p className="muted m-0 px-2.5 pb-1.5 text-xs">Reading the document…</p>;
  if (loaded.state === 'failed') return <p className="muted m-0 px-2.5 pb-1.5 text-xs">{loaded.why}</p>;
  const { document } = loaded;
  const facts = [
    document.fileName ?? document.title,
    document.pageCount === undefined
      ? undefined
      : `${document.pageCount} ${document.pageCount === 1 ? 'page' : 'pages'}`,
    document.library === 'shared' ? 'shared library' : 'your documents',
  ].filter((fact) => fact !== undefined);
  return <p className="muted m-0 px-2.5 pb-1.5 text-xs [overflow-wrap:anywhere]">From {facts.join(' · ')}</p>;
}

export function SourceChips(props: {
  sources: readonly SourcePart[];
  readDocument: ReadDocument;
}): ReactNode {
  const [documents, setDocuments] = useState<Record<string, Loaded>>({});
  const open = (documentId: string | undefined): void => {
    if (documentId === undefined || documents[documentId] !== undefined) return;
    setDocuments((known) => ({ ...known, [documentId]: { state: 'loading' } }));
    props.readDocument(documentId).then(
      (document) => setDocuments((known) => ({ ...known, [documentId]: { state: 'read', document } })),
      (error: unknown) =>
        setDocuments((known) => ({
          ...known,
          [documentId]: {
            state: 'failed',
            why:
              error instanceof ApiError && error.status === 404
                ? 'The document is no longer in the knowledge base.'
                : `The document could not be read: ${describeError(error)}`,
          },
        })),
    );
  };
  return (
    <ol className="m-0 mt-2 flex list-none flex-wrap gap-1.5 p-0 text-sm" aria-label="Sources">
      {props.sources.map((source, index) => {
        const details = sourceDetails(source);
        return (
          <li key={source.sourceId} className="max-w-full">
            <details
              className="rounded-2xl border border-line bg-soft open:rounded-lg"
              onToggle={(event) => {
                if (event.currentTarget.open) open(details.documentId);
              }}
            >
              <summary className="cursor-pointer list-none px-2.5 py-0.5 [overflow-wrap:anywhere]">
                <span className="mr-1 font-semibold text-accent">{index + 1}</span>
                {citationLabel(source.title ?? '', details.citation)}
              </summary>
              {details.excerpt !== undefined && (
                <blockquote className="muted m-0 border-t border-line px-2.5 py-1.5 text-xs">
                  {details.excerpt}
                </blockquote>
              )}
              {details.documentId !== undefined && <DocumentLine loaded={documents[details.documentId]} />}
            </details>
          </li>
        );
      })}
    </ol>
  );
}
