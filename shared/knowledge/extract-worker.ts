// A reading worker's entry: loads the readers (pdf.js included) and says it is ready, then reads each document it
// is sent with extract-document.ts within the job's limits, one at a time, and answers with its text or why it
// cannot be read. extract-pool.ts starts it, times each job and replaces it when it dies or overruns.
import { parentPort } from 'node:worker_threads';

import type { ReadReply, ReadRequest } from './extract-pool.js';
import { UnreadableDocumentError } from './document-text.js';
import { extractDocument } from './extract-document.js';
import { loadPdfjs } from './pdf-text.js';

const port = parentPort;
if (port === null) throw new Error('extract-worker.ts runs as a worker thread (extract-pool.ts starts it).');

port.on('message', (request: ReadRequest) => {
  extractDocument(request.format, request.content, request.limits).then(
    (document) => port.postMessage({ type: 'read', id: request.id, document } satisfies ReadReply),
    (error: unknown) =>
      port.postMessage({
        type: 'failed',
        id: request.id,
        // What the readers throw for a content is what they throw for it every time: only the pool's own failures
        // (a worker lost, a reader that would not start) are worth another try.
        failure: error instanceof UnreadableDocumentError ? error.failureCode : 'unreadable',
        message:
          error instanceof UnreadableDocumentError
            ? error.message
            : `The ${request.format === 'pdf' ? 'PDF' : 'document'} could not be read: its reader stopped on it.`,
        detail: error instanceof Error ? error.message : String(error),
      } satisfies ReadReply),
  );
});

// The time budget of a job counts from when it is sent: loading pdf.js (a second or more) is not any one job's.
await loadPdfjs();
port.postMessage({ type: 'ready' } satisfies ReadReply);
