// A reading worker's entry: says it is ready at once (pdf.js loads in the background), then reads each document with
// extract-document.ts within the job's limits, one at a time, and answers with its text or why it cannot be read.
// extract-pool.ts starts it, times each job from its `begin` and replaces it when it dies or overruns.
import { parentPort } from 'node:worker_threads';

import type { ReadReply, ReadRequest } from './extract-pool.js';
import { UnreadableDocumentError } from './document-text.js';
import { extractDocument } from './extract-document.js';
import { loadPdfjs } from './pdf-text.js';

const port = parentPort;
if (port === null) throw new Error('extract-worker.ts runs as a worker thread (extract-pool.ts starts it).');

// pdf.js is loaded in the background from the start, and a PDF's job begins once it is: loading it (seconds in a
// cold process) is no one document's time.
loadPdfjs().catch(() => undefined);

const read = (request: ReadRequest): void => {
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
      } satisfies ReadReply),
  );
};

port.on('message', (request: ReadRequest) => {
  const prepared = request.format === 'pdf' ? loadPdfjs().then(() => undefined) : Promise.resolve();
  prepared.then(
    () => {
      port.postMessage({ type: 'begin', id: request.id } satisfies ReadReply);
      read(request);
    },
    (error: unknown) =>
      // Not the document's fault: the job fails as retryable.
      port.postMessage({
        type: 'failed',
        id: request.id,
        message: `The PDF reader could not be loaded: ${error instanceof Error ? error.message : String(error)}`,
      } satisfies ReadReply),
  );
});

port.postMessage({ type: 'ready' } satisfies ReadReply);
