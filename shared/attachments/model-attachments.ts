// The files of a round's prompt, read at the call: a recent image as its bytes (base64, the same every turn, so the
// prefix stays cacheable), an older one as a caption; a text or PDF file as its text within ATTACHMENTS_TEXT_TOKENS,
// or when longer, its passages that best match the latest question.
import type { ChatMessage } from '../llm/llm-gateway.js';
import {
  ATTACHMENT_CHARS_PER_TOKEN,
  attachmentLabel,
  imageCaption,
  inlinedFile,
  isImageAttachment,
  type MessageAttachment,
} from '../message-attachments.js';
import { matchingPassages, paragraphChunker, type Chunker } from './attachment-passages.js';
import type { AttachmentStore } from './attachment-store.js';
import type { AttachmentConfig } from './settings.js';

export interface AttachmentReading {
  store: Pick<AttachmentStore, 'read'>;
  config: Pick<AttachmentConfig, 'imageTurns' | 'textTokens'>;
  /** A PDF's text, read by the workers that read knowledge documents (their limits apply). */
  readPdf?: (bytes: Uint8Array, owner: string) => Promise<string>;
  /** Cuts a file too long for the budget into passages to search (the knowledge base's chunker); paragraphs if not. */
  chunk?: Chunker;
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
  const question = messages[userIndexes.at(-1) ?? -1]?.content ?? '';
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
  question: string,
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
    const shown = fitted(text, Math.max(0, budget), question, reading.chunk ?? paragraphChunker);
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
function fitted(text: string, budget: number, question: string, chunk: Chunker): string {
  if (text.length <= budget) return text;
  const found = matchingPassages(text, question, budget, chunk);
  if (found.kept > 0)
    return (
      `[This file is longer than the prompt allows: these are the ${found.kept} of its ${found.of} passages that ` +
      `best match the question.]\n${found.text}`
    );
  return `${text.slice(0, budget)}\n[The rest of this file was cut to fit the prompt.]`;
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
