// Writing a knowledge document's record on the version read: read it, decide, write; a write that lost to another
// writer is decided again on a fresh read, a bounded number of times.
import type { KnowledgeDocuments, StoredDocument } from './knowledge-documents.js';

/** Conditional writes of the record tried before the message is left to be delivered again. */
const WRITE_ATTEMPTS = 5;

/** What a step of onRecord returns when its write lost to a concurrent one: the record is read again. */
export const READ_AGAIN = Symbol('read again');

/**
 * Reads the document's record and lets `step` decide on it and write on the version read, until a step ends with
 * something other than READ_AGAIN; after WRITE_ATTEMPTS reads the message fails and is retried (`doing` says what
 * the ingestion tried to do).
 */
export async function onRecord<T>(
  documents: Pick<KnowledgeDocuments, 'get'>,
  message: { library: string; documentId: string },
  doing: string,
  step: (stored: StoredDocument | undefined) => Promise<T | typeof READ_AGAIN>,
): Promise<T> {
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt += 1) {
    const outcome = await step(await documents.get(message.library, message.documentId));
    if (outcome !== READ_AGAIN) return outcome;
  }
  throw new Error(`The document record kept changing while the ingestion tried to ${doing}; it is retried.`);
}
