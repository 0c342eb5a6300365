// What a share keeps of a conversation, as pure functions: each message cut down to what a reader may see, and the
// messages packed into chunks that each stay far below Cosmos DB's item limit, the whole bounded too.
import { AppError } from '../errors.js';
import type { HistoryMessage } from '../history/contracts.js';
import {
  SHARE_CHUNK_BYTES,
  SHARE_MAX_BYTES,
  SHARED_TOOL_TEXT_CHARS,
  type SharedMessage,
} from './contracts.js';

/** The snapshot would pass SHARE_MAX_BYTES: 413, and nothing is stored. */
export class ShareTooLargeError extends AppError {
  constructor(bytes: number) {
    super(
      'share_too_large',
      `The conversation is too long to share whole (${Math.ceil(bytes / 1024)} KiB of messages, at most ` +
        `${SHARE_MAX_BYTES / 1024} KiB): share it up to an earlier message with upToMessageId.`,
      413,
    );
  }
}

/**
 * A message as a share shows it: role, text, time and the titles of the sources an answer cites; tool calls only
 * when the owner includes them (cut to SHARED_TOOL_TEXT_CHARS). Never its ids, usage, branch or a failure's details.
 */
export function toSharedMessage(message: HistoryMessage, includeToolCalls: boolean): SharedMessage {
  const sources = message.sources?.map(({ title, citation, heading, pages }) => ({
    title,
    citation,
    ...(heading === undefined ? {} : { heading }),
    ...(pages === undefined ? {} : { pages }),
  }));
  const toolCalls = includeToolCalls
    ? message.toolCalls?.map((call) => ({
        name: call.name,
        arguments: cut(call.arguments),
        result: cut(call.result),
        isError: call.isError,
      }))
    : undefined;
  return {
    role: message.role,
    content: message.content,
    timestamp: message.timestamp,
    ...(sources === undefined || sources.length === 0 ? {} : { sources }),
    ...(toolCalls === undefined || toolCalls.length === 0 ? {} : { toolCalls }),
  };
}

function cut(text: string): string {
  return text.length <= SHARED_TOOL_TEXT_CHARS ? text : `${text.slice(0, SHARED_TOOL_TEXT_CHARS)}…`;
}

/** The bytes a message adds to a chunk's JSON (its text and the comma between messages). */
export function sharedMessageBytes(message: SharedMessage): number {
  return Buffer.byteLength(JSON.stringify(message), 'utf8') + 1;
}

/**
 * The messages in order, packed into chunks of at most `chunkBytes` of JSON each (a message larger than that goes
 * alone in its chunk; the conversation's own limits keep a message far below Cosmos DB's 2 MB). ShareTooLargeError
 * when all of them pass `maxBytes`.
 */
export function chunkMessages(
  messages: readonly SharedMessage[],
  limits: { chunkBytes: number; maxBytes: number } = {
    chunkBytes: SHARE_CHUNK_BYTES,
    maxBytes: SHARE_MAX_BYTES,
  },
): SharedMessage[][] {
  const chunks: SharedMessage[][] = [];
  let current: SharedMessage[] = [];
  let currentBytes = 0;
  let total = 0;
  for (const message of messages) {
    const bytes = sharedMessageBytes(message);
    total += bytes;
    if (total > limits.maxBytes) throw new ShareTooLargeError(total);
    if (current.length > 0 && currentBytes + bytes > limits.chunkBytes) {
      chunks.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(message);
    currentBytes += bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
