// The PDF worker thread's entry: reads each PDF it is sent with pdf-text.ts and answers with the extracted document,
// or with why it could not be read. pdf-reader.ts starts it and talks to it.
import { parentPort } from 'node:worker_threads';

import { UnreadableDocumentError } from './document-text.js';
import type { PdfReply, PdfRequest } from './pdf-reader.js';
import { readPdfText } from './pdf-text.js';

const port = parentPort;
if (port === null) throw new Error('pdf-worker.ts runs as a worker thread (pdf-reader.ts starts it).');

port.on('message', (request: PdfRequest) => {
  readPdfText(request.content).then(
    (document) => port.postMessage({ id: request.id, ok: true, document } satisfies PdfReply),
    (error: unknown) =>
      port.postMessage({
        id: request.id,
        ok: false,
        ...(error instanceof UnreadableDocumentError ? { unreadable: error.failureCode } : {}),
        message: error instanceof Error ? error.message : String(error),
      } satisfies PdfReply),
  );
});
