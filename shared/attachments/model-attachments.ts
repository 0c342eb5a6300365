// The files of a round's prompt, read at the call: a recent image as its bytes (base64, the same every turn, so the
// prefix stays cacheable), an older one as a caption; a text or PDF file as its text within ATTACHMENTS_TEXT_TOKENS,
// or when longer, its passages that best match the latest question (by words and, when they can be had, embeddings).
import type { ChatMessage } from '../llm/llm-gateway.js';
import {
  ATTACHMENT_CHARS_PER_TOKEN,
  attachmentLabel,
  imageCaption,
  inlinedFile,
  isImageAttachment,
  type MessageAttachment,
} from '../message-attachments.js';
import {
  matchingPassages,
  paragraphChunker,
  type Chunker,
  type PassageEmbeddings,
} from './attachment-passages.js';
import type { AttachmentStore, StoredAttachment } from './attachment-store.js';
import { passageVectors, type PassageEmbedding } from './passage-vectors.js';
import type { AttachmentConfig } from './settings.js';

export interface AttachmentReading {
  store: Pick<AttachmentStore, 'read'>;
  config: Pick<AttachmentConfig, 'imageTurns' | 'textTokens'>;
  /** A PDF's text, read by the workers that read knowledge documents (their limits apply). */
  readPdf?: (bytes: Uint8Array, owner: string) => Promise<string>;
  /** Cuts a file too long for the budget into passages to search (the knowledge base's chunker); paragraphs if not. */
  chunk?: Chunker;
  /** Ranks those passages by their embeddings too (kept beside the file); by words alone without it. */
  embedding?: PassageEmbedding;
}

/** The round's latest question, its embedding made at most once for all the round's files. */
interface Question {
  text: string;
  vector(): Promise<number[]>;
}

/** The messages with their files read in; messages without files are returned as they are (the same objects). */
export async function withAttachments(
  reading: AttachmentReading,
  userId: string,
  messages: readonly ChatMessage[],
): Promise<ChatMessage[]> {
  if (!messages.some((message) => message.role === 'user' && message.attachments?.length))
    return [...messages];
  const userIndexes = messages.flatMap((message, index) => (message.role === 'user' ? [index] : []));
  const recent = new Set(userIndexes.slice(-reading.config.imageTurns));
  // A file too long for the prompt is searched for what the conversation asks now.
  const question = askedIn(reading, messages[userIndexes.at(-1) ?? -1]?.content ?? '');
  return Promise.all(
    messages.map(async (message, index) => {
      if (message.role !== 'user' || !message.attachments?.length) return message;
      return readMessage(reading, userId, message, recent.has(index), question);
    }),
  );
}

async function readMessage(
  reading: AttachmentReading,
  userId: string,
  { content, attachments = [] }: { content: string; attachments?: readonly MessageAttachment[] | undefined },
  showImages: boolean,
  question: Question,
): Promise<ChatMessage> {
  const images: { mediaType: string; data: string }[] = [];
  const notes: string[] = [];
  let budget = reading.config.textTokens * ATTACHMENT_CHARS_PER_TOKEN;
  for (const attachment of attachments) {
    if (isImageAttachment(attachment) && !showImages) {
      notes.push(imageCaption(attachment));
      continue;
    }
    const found = await reading.store.read(userId, attachment.id);
    if (found === undefined) {
      notes.push(`[${attachmentLabel(attachment)} was attached here; it has since been deleted.]`);
      continue;
    }
    if (isImageAttachment(attachment)) {
      images.push({ mediaType: found.attachment.mediaType, data: found.bytes.toString('base64') });
      continue;
    }
    const text = await textOf(reading, attachment, found.bytes, userId);
    const shown = await fitted(reading, userId, found.attachment, text, Math.max(0, budget), question);
    budget -= shown.length;
    notes.push(inlinedFile(attachment, shown));
  }
  return {
    role: 'user',
    content: notes.length === 0 ? content : `${content}\n\n${notes.join('\n\n')}`,
    ...(images.length > 0 ? { images } : {}),
  };
}

/** The whole text when it fits; else its passages that best match the question, or its start if none fits. */
async function fitted(
  reading: AttachmentReading,
  userId: string,
  attachment: StoredAttachment,
  text: string,
  budget: number,
  question: Question,
): Promise<string> {
  if (text.length <= budget) return text;
  const passages = (reading.chunk ?? paragraphChunker)(text);
  const embeddings = await embeddingsOf(reading, userId, attachment, passages, question);
  const found = matchingPassages(passages, question.text, budget, embeddings);
  if (found.kept > 0)
    return (
      `[This file is longer than the prompt allows: these are the ${found.kept} of its ${found.of} passages that ` +
      `best match the question.]\n${found.text}`
    );
  return `${text.slice(0, budget)}\n[The rest of this file was cut to fit the prompt.]`;
}

/** The question's and the passages' embeddings; undefined (words alone, with a warning) when they cannot be had. */
async function embeddingsOf(
  reading: AttachmentReading,
  userId: string,
  attachment: StoredAttachment,
  passages: readonly string[],
  question: Question,
): Promise<PassageEmbeddings | undefined> {
  const embedding = reading.embedding;
  if (embedding === undefined || question.text.trim() === '') return undefined;
  if (passages.length === 0 || passages.length > embedding.maxPassages) return undefined;
  // Both at once; settled, so that the passages' vectors are still kept when the question's embedding fails.
  const [asked, kept] = await Promise.allSettled([
    question.vector(),
    passageVectors(embedding, userId, attachment, passages),
  ]);
  if (asked.status === 'fulfilled' && kept.status === 'fulfilled')
    return kept.value === undefined ? undefined : { question: asked.value, passages: kept.value };
  const failure: unknown =
    asked.status === 'rejected' ? asked.reason : (kept as PromiseRejectedResult).reason;
  embedding.log.warn(
    `The passages of attachment ${attachment.id} are ranked by words alone: the embeddings failed.`,
    failure,
  );
  return undefined;
}

/** The question, whose embedding is asked for once, by the first long file that needs it. */
function askedIn(reading: AttachmentReading, text: string): Question {
  let vector: Promise<number[]> | undefined;
  return {
    text,
    vector: () =>
      (vector ??= (async () => {
        const [found] = await (reading.embedding?.llm.embed([text]) ?? Promise.resolve([]));
        if (found === undefined)
          throw new Error('The embeddings endpoint answered no vector for the question.');
        return found;
      })()),
  };
}

async function textOf(
  reading: AttachmentReading,
  attachment: MessageAttachment,
  bytes: Buffer,
  owner: string,
): Promise<string> {
  if (attachment.mediaType === 'application/pdf') {
    if (reading.readPdf === undefined) return '[This PDF could not be read here.]';
    try {
      return await reading.readPdf(bytes, owner);
    } catch (error) {
      return `[This PDF could not be read: ${error instanceof Error ? error.message : String(error)}]`;
    }
  }
  return bytes.toString('utf8');
}
