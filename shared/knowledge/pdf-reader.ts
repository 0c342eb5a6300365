// Reads PDFs in a worker thread of their own (pdf-worker.ts), started on the first PDF and kept for the next ones:
// pdf.js's Node build replaces built-ins the whole app relies on (JSON.stringify, JSON.parse, Array.prototype.push)
// with slower polyfills, and a large PDF is seconds of CPU. In the worker neither reaches the thread that serves
// requests. A worker that dies fails what it was reading with a retryable error (the ingestion is redelivered);
// a PDF that takes longer than PDF_READ_TIMEOUT_MS is unreadable, for good.
import { Worker } from 'node:worker_threads';

import { UnreadableDocumentError, type ExtractedDocument } from './document-text.js';

/** A PDF still being read after this long is given up (and its worker replaced). */
export const PDF_READ_TIMEOUT_MS = 120_000;

export interface PdfRequest {
  id: number;
  content: Uint8Array;
}

export type PdfReply =
  | { id: number; ok: true; document: ExtractedDocument }
  | { id: number; ok: false; unreadable?: 'unreadable' | 'empty'; message: string };

interface Pending {
  resolve(document: ExtractedDocument): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

let reader: { worker: Worker; pending: Map<number, Pending> } | undefined;
let nextId = 1;

/** The PDF's text by page, read in the PDF worker; throws UnreadableDocumentError when it cannot be read. */
export function readPdf(content: Uint8Array): Promise<ExtractedDocument> {
  const { worker, pending } = (reader ??= startReader());
  const id = nextId++;
  // A copy, transferred: the caller keeps its bytes, and nothing is copied twice.
  const copy = new Uint8Array(content);
  return new Promise<ExtractedDocument>((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(
        new UnreadableDocumentError(
          'unreadable',
          `The PDF could not be read: it took longer than ${PDF_READ_TIMEOUT_MS / 1000} seconds.`,
        ),
      );
      // The worker may be stuck in that PDF: the next one gets a new worker, and any other PDF it was reading is
      // failed as retryable by its exit.
      void worker.terminate();
    }, PDF_READ_TIMEOUT_MS);
    pending.set(id, { resolve, reject, timer });
    worker.ref();
    worker.postMessage({ id, content: copy } satisfies PdfRequest, [copy.buffer]);
  });
}

function startReader(): { worker: Worker; pending: Map<number, Pending> } {
  // Compiled, the worker is the .js beside this file. From the sources (tests, tsx) it is the .ts, which the new
  // thread can only load once tsx's loader is registered in it (a loader is per thread).
  const worker = import.meta.url.endsWith('.ts')
    ? new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(
          new URL('./pdf-worker.ts', import.meta.url).href,
        )}); });`,
        { eval: true },
      )
    : new Worker(new URL('./pdf-worker.js', import.meta.url));
  const pending = new Map<number, Pending>();
  const state = { worker, pending };
  const settle = (id: number): Pending | undefined => {
    const entry = pending.get(id);
    if (entry === undefined) return undefined;
    pending.delete(id);
    clearTimeout(entry.timer);
    // An idle worker does not keep the process alive.
    if (pending.size === 0) worker.unref();
    return entry;
  };
  worker.on('message', (reply: PdfReply) => {
    const entry = settle(reply.id);
    if (entry === undefined) return;
    if (reply.ok) entry.resolve(reply.document);
    else
      entry.reject(
        reply.unreadable === undefined
          ? new Error(`The PDF reader failed: ${reply.message}`)
          : new UnreadableDocumentError(reply.unreadable, reply.message),
      );
  });
  const stopped = (why: string) => {
    if (reader === state) reader = undefined;
    for (const id of [...pending.keys()]) settle(id)?.reject(new Error(`The PDF reader stopped: ${why}`));
  };
  worker.on('error', (error) => stopped(error.message));
  worker.on('exit', (code) => stopped(`its thread exited with code ${code}`));
  worker.unref();
  return state;
}
