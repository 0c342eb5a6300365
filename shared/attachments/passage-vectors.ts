// The embeddings of a long file's passages: computed once (batched embeddings requests) and kept beside the file,
// keyed by the embedding model and the exact texts embedded, so later rounds and turns pay for the question alone.
import { createHash } from 'node:crypto';
import type { LlmGateway } from '../llm/llm-gateway.js';
import type { Logger } from '../logger.js';
import type { StoredAttachment } from './attachment-store.js';

/** Where a file's passage embeddings are kept (beside the file: they go when it goes). */
export interface PassageVectorStore {
  /** The vectors kept under `key` for the user's file; undefined when there are none. */
  read(userId: string, attachmentId: string, key: string): Promise<Float32Array[] | undefined>;
  /** Keeps them under `key`; vectors already kept there (a round racing this one wrote them) stay as they are. */
  write(
    userId: string,
    attachment: Pick<StoredAttachment, 'id' | 'sessionId'>,
    key: string,
    vectors: readonly ArrayLike<number>[],
  ): Promise<void>;
}

export interface PassageEmbedding {
  llm: Pick<LlmGateway, 'embed'>;
  vectors: PassageVectorStore;
  /** The embedding model (or Azure deployment): vectors of another model are made anew. */
  model: string;
  /** Texts per embeddings request (KNOWLEDGE_EMBEDDING_BATCH). */
  batch: number;
  /** The most passages a file is embedded with (KNOWLEDGE_MAX_CHUNKS); one cut into more is ranked by words alone. */
  maxPassages: number;
  log: Pick<Logger, 'warn'>;
}

/** Embeddings requests under way at once for one file: its first round waits for them. */
const PARALLEL_REQUESTS = 4;

/**
 * The embeddings of the file's passages, in order: those kept when the model and the texts are the same, else
 * made (PARALLEL_REQUESTS batches at a time) and kept. Undefined for a file of more than `maxPassages` passages.
 * Throws when the embeddings endpoint fails; a failure to keep them is only logged (they serve this round).
 */
export async function passageVectors(
  services: PassageEmbedding,
  userId: string,
  attachment: Pick<StoredAttachment, 'id' | 'name' | 'sessionId'>,
  passages: readonly string[],
): Promise<readonly ArrayLike<number>[] | undefined> {
  if (passages.length === 0 || passages.length > services.maxPassages) return undefined;
  // The file's name leads each passage, as a knowledge document's title leads its chunks.
  const inputs = passages.map((passage) => `${attachment.name}\n\n${passage}`);
  const key = vectorsKey(services.model, inputs);
  const kept = await services.vectors.read(userId, attachment.id, key);
  if (kept !== undefined && kept.length === inputs.length) return kept;
  const batches: string[][] = [];
  for (let start = 0; start < inputs.length; start += services.batch)
    batches.push(inputs.slice(start, start + services.batch));
  const vectors: number[][] = [];
  for (let start = 0; start < batches.length; start += PARALLEL_REQUESTS) {
    const answered = await Promise.all(
      batches.slice(start, start + PARALLEL_REQUESTS).map(async (batch) => {
        const found = await services.llm.embed(batch);
        if (found.length !== batch.length)
          throw new Error(
            `The embeddings endpoint answered ${found.length} vectors for ${batch.length} texts.`,
          );
        return found;
      }),
    );
    for (const found of answered) vectors.push(...found);
  }
  try {
    await services.vectors.write(userId, attachment, key, vectors);
  } catch (error) {
    services.log.warn(`The passage embeddings of attachment ${attachment.id} could not be kept:`, error);
  }
  return vectors;
}

/** The key of a file's embeddings: the model and every text embedded, so a change in either makes them anew. */
export function vectorsKey(model: string, inputs: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of [model, ...inputs])
    hash.update(`${Buffer.byteLength(part, 'utf8')}:`).update(part, 'utf8');
  return hash.digest('hex').slice(0, 32);
}
