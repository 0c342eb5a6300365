// The ingestion worker's use-case: one queued document (a message on KNOWLEDGE_INGEST_QUEUE) is read from its
// upload, its text extracted and cut into chunks, embedded and stored batch by batch, then marked ready — or,
// when it cannot be indexed, marked failed with the reason and nothing of it left searchable.
import { createHash } from 'node:crypto';
import { mapBounded } from '../bounded-parallel.js';
import { ensureError } from '../errors.js';
import { cleanDisplayText } from '../plain-text.js';
import { LlmError, type LlmGateway } from '../llm/llm-gateway.js';
import type { Logger } from '../logger.js';
import { MAX_DELIVERY_COUNT } from '../messaging/service-bus-entities.js';
import { chunkDocument, embeddingInput } from './chunking.js';
import {
  chunkId,
  MAX_TITLE_CHARS,
  type ChunkDraft,
  type DocumentFailure,
  type IngestDocumentMessage,
  type KnowledgeChunk,
  type KnowledgeDocument,
} from './contracts.js';
import { UnreadableDocumentError, type ExtractedDocument } from './document-text.js';
import type { DocumentReader } from './extract-pool.js';
import type { KnowledgeChunks } from './knowledge-chunks.js';
import type { KnowledgeDocuments, StoredDocument } from './knowledge-documents.js';
import type { KnowledgeUploads } from './knowledge-uploads.js';
import { onRecord, READ_AGAIN } from './record-writes.js';
import type { KnowledgeConfig } from './settings.js';

export interface IngestServices {
  documents: KnowledgeDocuments;
  chunks: KnowledgeChunks;
  uploads: KnowledgeUploads;
  /** Reads the upload's text in a worker, within the reading budgets. */
  reader: Pick<DocumentReader, 'read'>;
  llm: Pick<LlmGateway, 'embed'>;
  settings: Pick<KnowledgeConfig, 'chunkTokens' | 'chunkOverlapTokens' | 'maxChunks' | 'embeddingBatch'>;
  /**
   * Runs the document's embeddings with their calls counted (to its uploader, as the ingestion of this very record
   * and attempt); without it the calls are made as they are.
   */
  accountFor?: <T>(document: KnowledgeDocument, work: () => Promise<T>) => Promise<T>;
  now?: () => Date;
}

/** How often Service Bus has delivered the message, this time included (1 when unknown). */
export interface Delivery {
  deliveryCount: number;
}

/**
 * Deliveries over which a failing embeddings endpoint (429s and 5xx the client's own retries did not ride out) is
 * retried before the document fails with the reason: an outage of some minutes is ridden out, and a document is
 * never left `processing` for good.
 */
export const EMBEDDING_DELIVERIES = 5;

/**
 * Batches of one document embedded and stored at once (each an embeddings request of KNOWLEDGE_EMBEDDING_BATCH
 * texts, then its chunks' writes): the vectors held at once are those of this many batches.
 */
const EMBEDDING_CONCURRENCY = 2;

export type IngestOutcome =
  /** Nothing to do: no such record, another attempt's message, or a document no longer waiting to be indexed. */
  | { status: 'skipped'; reason: 'no-document' | 'other-attempt' | 'not-pending' }
  | { status: 'ready'; chunkCount: number; embeddingRequests: number }
  | { status: 'failed'; failure: DocumentFailure }
  /**
   * The document was deleted, failed or made ready by another run, or uploaded anew, while this one worked: what it
   * wrote is removed, unless it is what the document now holds (ready, or the next attempt's same chunks).
   */
  | { status: 'abandoned'; reason: 'deleted' | 'settled' | 'other-attempt' };

type Log = Pick<Logger, 'log' | 'warn'>;

/** A reason the document cannot be indexed, for good: it fails with it. */
class IngestFailure extends Error {
  constructor(readonly failure: DocumentFailure) {
    super(failure.reason);
  }
}

/** What the content gives, before any embedding: the chunks' texts and the counts the record keeps. */
interface Prepared {
  drafts: ChunkDraft[];
  title: string;
  pageCount: number;
  characters: number;
}

interface Indexed {
  chunkCount: number;
  title: string;
  pageCount: number;
  characters: number;
  embeddingRequests: number;
}

export async function ingestDocument(
  services: IngestServices,
  message: IngestDocumentMessage,
  log: Log,
  delivery: Delivery = { deliveryCount: 1 },
): Promise<IngestOutcome> {
  const label = `Knowledge: document ${message.documentId} (attempt ${message.attempt}) of ${message.library}`;
  try {
    return await ingest(services, message, log, label);
  } catch (error) {
    // Whatever failed (the content, the embeddings, a chunk write, a record that kept changing), the last delivery
    // settles the document as failed rather than leave it `processing` behind a dead-lettered message.
    const failure = failureOf(error, delivery);
    if (failure === undefined) throw error;
    return fail(services, message, failure, log, label);
  }
}

async function ingest(
  services: IngestServices,
  message: IngestDocumentMessage,
  log: Log,
  label: string,
): Promise<IngestOutcome> {
  const started = await markProcessing(services, message);
  if ('skipped' in started) {
    // A document gone, failed or being deleted keeps no chunk: a run that stopped after writing some (or a delete
    // that stopped halfway) left them, and nothing else would remove them.
    const removed = started.orphaned ? await services.chunks.remove(message.library, message.documentId) : 0;
    log.log(
      `${label}: skipped (${started.skipped.reason})${removed > 0 ? `, ${removed} chunks removed` : ''}.`,
    );
    return started.skipped;
  }

  const prepared = await prepare(services, started.document);
  const embed = () => embedAndStore(services, started.document, prepared);
  const embeddingRequests = await (services.accountFor?.(started.document, embed) ?? embed());
  // What an earlier run of a longer cut left behind, once every chunk of this one is written.
  await services.chunks.remove(message.library, message.documentId, prepared.drafts.length);
  const indexed: Indexed = {
    chunkCount: prepared.drafts.length,
    title: prepared.title,
    pageCount: prepared.pageCount,
    characters: prepared.characters,
    embeddingRequests,
  };
  const outcome = await markReady(services, message, indexed);
  if (outcome.status === 'abandoned') {
    if (outcome.reason !== 'other-attempt') await services.chunks.remove(message.library, message.documentId);
    log.log(`${label}: its chunks were not kept (${outcome.reason} meanwhile).`);
    return outcome;
  }
  try {
    await services.uploads.remove(message.documentId, message.attempt, started.document.parts);
  } catch (error) {
    // The document is ready: a delivery again would not come back for the bytes, which expire within the week.
    log.warn(`${label}: ready, but its upload was not removed (it expires): ${ensureError(error).message}`);
  }
  log.log(
    `${label}: ready, ${indexed.chunkCount} chunks from ${indexed.characters} characters ` +
      `(${indexed.embeddingRequests} embeddings requests).`,
  );
  return outcome;
}

type Skipped = Extract<IngestOutcome, { status: 'skipped' }>;

/**
 * The record marked processing (unless it already is: a redelivery), or why there is nothing to do, and whether
 * the document's chunks must go: it is gone, failed or being deleted (whichever attempt it is at), so any chunk of
 * it is an orphan. Chunks of a document ready, or of another attempt still being indexed, are that attempt's.
 */
async function markProcessing(
  services: IngestServices,
  message: IngestDocumentMessage,
): Promise<StoredDocument | { skipped: Skipped; orphaned: boolean }> {
  return onRecord(services.documents, message, 'start', async (stored) => {
    if (stored === undefined)
      return { skipped: { status: 'skipped', reason: 'no-document' }, orphaned: true };
    const { document, version } = stored;
    const orphaned = document.status === 'failed' || document.status === 'deleting';
    if (document.attempt !== message.attempt)
      return { skipped: { status: 'skipped', reason: 'other-attempt' }, orphaned };
    if (document.status === 'processing') return stored;
    if (document.status !== 'queued')
      return { skipped: { status: 'skipped', reason: 'not-pending' }, orphaned };
    const processing = { ...document, status: 'processing' as const, updatedAt: nowIso(services) };
    if ((await services.documents.replace(processing, version)) === 'written')
      return { document: processing, version };
    return READ_AGAIN;
  });
}

/** The upload read, checked, extracted and cut into chunks: everything before the embeddings. */
async function prepare(services: IngestServices, document: KnowledgeDocument): Promise<Prepared> {
  const content = await services.uploads.get(document.documentId, document.attempt, document.parts);
  if (content === undefined)
    throw new IngestFailure({
      code: 'upload_missing',
      reason:
        "The uploaded file is no longer stored (uploads are kept a week until they're indexed): upload it again.",
    });
  if (createHash('sha256').update(content).digest('hex') !== document.contentHash)
    throw new IngestFailure({
      code: 'upload_corrupt',
      reason: 'The stored upload does not match what was uploaded: upload the document again.',
    });

  const extracted = await services.reader.read({
    format: document.format,
    content,
    owner: document.ownerId,
  });
  const title = document.titleGiven ? document.title : (titleOf(extracted) ?? document.title);
  const { chunkTokens, chunkOverlapTokens, maxChunks } = services.settings;
  // The chunker stops at one over the limit: enough to know the document makes too many.
  const drafts = chunkDocument(extracted, {
    targetTokens: chunkTokens,
    overlapTokens: chunkOverlapTokens,
    maxChunks,
  });
  if (drafts.length === 0)
    throw new IngestFailure({ code: 'empty', reason: 'The document has no text to index.' });
  if (drafts.length > maxChunks)
    throw new IngestFailure({
      code: 'too_large',
      reason: `The document makes more than ${maxChunks} chunks, the most one document may have (KNOWLEDGE_MAX_CHUNKS): split it into smaller documents.`,
    });
  return {
    drafts,
    title,
    pageCount: extracted.pageCount,
    characters: extracted.blocks.reduce((sum, block) => sum + block.text.length, 0),
  };
}

/**
 * Embeds the chunks a batch of KNOWLEDGE_EMBEDDING_BATCH at a time and stores each batch as soon as its vectors
 * come, EMBEDDING_CONCURRENCY batches in flight: a document of thousands of chunks never holds more than those
 * batches' vectors (1,536 numbers each) at once. Returns the embeddings requests made.
 */
async function embedAndStore(
  services: IngestServices,
  document: KnowledgeDocument,
  { drafts, title }: Prepared,
): Promise<number> {
  const { embeddingBatch } = services.settings;
  const starts: number[] = [];
  for (let start = 0; start < drafts.length; start += embeddingBatch) starts.push(start);
  // On a failure mapBounded starts no more batches and waits for those under way, so no chunk of this run is
  // written after the run goes on to settle the document (and remove its chunks).
  await mapBounded(starts, EMBEDDING_CONCURRENCY, async (start) => {
    const batch = drafts.slice(start, start + embeddingBatch);
    const vectors = await services.llm.embed(batch.map((draft) => embeddingInput(title, draft)));
    if (vectors.length !== batch.length)
      throw new Error(
        `The embeddings endpoint answered ${vectors.length} vectors for ${batch.length} texts.`,
      );
    // Chunks by id: the same chunk again (a redelivery) changes nothing.
    await services.chunks.put(
      batch.map((draft, i): KnowledgeChunk => ({
        ...draft,
        id: chunkId(document.documentId, draft.index),
        kind: 'knowledge-chunk',
        library: document.library,
        documentId: document.documentId,
        title,
        embedding: vectors[i] as number[],
      })),
    );
  });
  return starts.length;
}

/**
 * The failure a thrown error settles the document with, or undefined to have the message delivered again: the
 * content's own faults (unreadable, empty, too large, too deeply nested, too slow to read) fail it at once; a failing embeddings endpoint is given EMBEDDING_DELIVERIES deliveries
 * (a refusal that retrying cannot change, none); anything else, every delivery but the last.
 */
function failureOf(error: unknown, delivery: Delivery): DocumentFailure | undefined {
  if (error instanceof IngestFailure) return error.failure;
  if (error instanceof UnreadableDocumentError) return { code: error.failureCode, reason: error.message };
  if (error instanceof LlmError) {
    if (error.retryable && delivery.deliveryCount < EMBEDDING_DELIVERIES) return undefined;
    return {
      code: 'embedding_failed',
      reason: `The document's embeddings could not be made${
        error.retryable ? ` (tried over ${delivery.deliveryCount} deliveries)` : ''
      }: ${error.message} Upload it again to retry.`,
    };
  }
  if (delivery.deliveryCount < MAX_DELIVERY_COUNT) return undefined;
  return {
    code: 'ingestion_failed',
    reason: `The document could not be indexed: ${ensureError(error).message} Upload it again to retry.`,
  };
}

/**
 * Settles the document as failed: the record first, on the version just read, then its chunks, then this
 * attempt's bytes. Only a run whose write took removes chunks: one that lost to a concurrent run (which made the
 * document ready, say) reads again and leaves that run's chunks alone. A crash between the mark and the removal
 * leaves chunks of a failed document, which search never shows and the next delivery removes.
 */
async function fail(
  services: IngestServices,
  message: IngestDocumentMessage,
  failure: DocumentFailure,
  log: Log,
  label: string,
): Promise<IngestOutcome> {
  return onRecord(services.documents, message, 'settle it', async (stored) => {
    if (stored === undefined || stored.document.status === 'deleting') {
      // Deleted meanwhile: chunks this run wrote before it failed would outlive the record.
      await services.chunks.remove(message.library, message.documentId);
      return { status: 'abandoned', reason: 'deleted' };
    }
    const { document, version } = stored;
    if (document.attempt !== message.attempt) return { status: 'abandoned', reason: 'other-attempt' };
    if (document.status === 'failed') {
      // Failed by another run of this message, which may have stopped before removing its chunks.
      await services.chunks.remove(message.library, message.documentId);
      return { status: 'abandoned', reason: 'settled' };
    }
    if (document.status === 'ready') return { status: 'abandoned', reason: 'settled' };
    const { pageCount: _p, chunkCount: _c, characters: _ch, embeddingRequests: _e, ...rest } = document;
    const failed: KnowledgeDocument = { ...rest, status: 'failed', failure, updatedAt: nowIso(services) };
    if ((await services.documents.replace(failed, version)) === 'conflict') return READ_AGAIN;
    await services.chunks.remove(message.library, message.documentId);
    await services.uploads.remove(message.documentId, message.attempt, document.parts);
    log.warn(`${label}: failed (${failure.code}): ${failure.reason}`);
    return { status: 'failed', failure };
  });
}

/** Marks the document ready on the version just read, unless it was deleted or settled meanwhile. */
async function markReady(
  services: IngestServices,
  message: IngestDocumentMessage,
  indexed: Indexed,
): Promise<IngestOutcome> {
  return onRecord(services.documents, message, 'finish it', async (stored) => {
    if (stored === undefined || stored.document.status === 'deleting')
      return { status: 'abandoned', reason: 'deleted' };
    const { document, version } = stored;
    // A later attempt (the document failed and was uploaded again) writes the same chunks itself.
    if (document.attempt !== message.attempt) return { status: 'abandoned', reason: 'other-attempt' };
    const done = {
      status: 'ready' as const,
      chunkCount: indexed.chunkCount,
      embeddingRequests: indexed.embeddingRequests,
    };
    // Another run of this message got there first (ready: the same chunks) or failed it (failed: none may stay).
    if (document.status === 'ready') return done;
    if (document.status === 'failed') return { status: 'abandoned', reason: 'settled' };
    const ready: KnowledgeDocument = {
      ...document,
      status: 'ready',
      title: indexed.title,
      pageCount: indexed.pageCount,
      chunkCount: indexed.chunkCount,
      characters: indexed.characters,
      embeddingRequests: indexed.embeddingRequests,
      updatedAt: nowIso(services),
    };
    if ((await services.documents.replace(ready, version)) === 'written') return done;
    return READ_AGAIN;
  });
}

/** The title a document gives itself, else its first line; undefined when it has no text. */
function titleOf(extracted: ExtractedDocument): string | undefined {
  const candidates = [extracted.title, ...extracted.blocks.map((block) => block.text)];
  for (const candidate of candidates) {
    const line = candidate
      ?.split('\n')
      .map((text) => text.replace(/\s+/g, ' ').trim())
      .find((text) => text !== '');
    // Cleaned after the cut, which may leave half a surrogate pair; a line of only controls is no title.
    const title = line === undefined ? '' : cleanDisplayText(line.slice(0, MAX_TITLE_CHARS));
    if (title !== '') return title;
  }
  return undefined;
}

function nowIso(services: IngestServices): string {
  return (services.now?.() ?? new Date()).toISOString();
}
