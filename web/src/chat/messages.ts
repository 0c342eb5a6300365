// The chat's UI messages: what their metadata holds, and a stored conversation (the History API's messages)
// turned into the messages useChat shows. A user message's id is its turn's chatMessageId; an answer's is
// `${chatMessageId}_assistant`, as history names it.
import type { UIMessage } from 'ai';
import type { UiMessageMetadata } from '../../../shared/streaming/ui-message-chunks.js';
import type { KnowledgeSource } from '../../../shared/conversation/sources.js';
import { connectNeedOf } from '../../../shared/streaming/tool-connect.js';
import { attachmentUrl } from './attachments';
import {
  parsedJson,
  SOURCE_METADATA_KEY,
  sourceMetadata,
} from '../../../shared/streaming/ui-message-chunks.js';

export interface TurnAlternatives {
  index: number;
  count: number;
  chatMessageIds: string[];
}

export interface ChatMetadata extends UiMessageMetadata {
  /** User messages: false when the user asked that this message not be remembered. */
  useMemory?: boolean;
  alternatives?: TurnAlternatives;
  failure?: { code?: string; message?: string };
  /** Answers read back from history: how long the model reasoned, as the server measured it. */
  reasoningMs?: number;
  /** Answers: the owner's thumbs up or down. */
  feedback?: 'up' | 'down';
}

export type ChatUIMessage = UIMessage<ChatMetadata>;

export interface StoredToolCall {
  id: string;
  name: string;
  arguments: string;
  result: string;
  isError: boolean;
}

/** A source kept on a stored answer, as the stream's `sources` event carried it. */
export type StoredSource = KnowledgeSource;

/** A file a stored user message carries, as history names it (never a URL: the page reads it with its token). */
export interface StoredAttachment {
  id: string;
  name: string;
  mediaType: string;
  size: number;
  width?: number;
  height?: number;
}

export interface HistoryMessage {
  messageId: string;
  chatMessageId: string;
  role: 'user' | 'assistant';
  content: string;
  timestamp: string;
  toolCalls?: StoredToolCall[];
  finishReason?: string;
  usage?: Record<string, unknown>;
  failure?: { code?: string; message?: string };
  sources?: StoredSource[];
  alternatives?: TurnAlternatives;
  /** Answers: the summary of the model's reasoning, and how long it reasoned when measured. */
  reasoning?: { text: string; durationMs?: number };
  /** Both messages of a turn posted with use_memory false. */
  useMemory?: false;
  /** Answers: the owner's rating. */
  feedback?: { rating: 'up' | 'down'; at: string };
  /** User messages: the files they carried. */
  attachments?: StoredAttachment[];
}

export interface StoredConversation {
  sessionId: string;
  title?: string;
  messages: HistoryMessage[];
  continuationToken?: string;
}

/** An answer's id, as history and the chunk mapper name it. */
export { assistantMessageId } from '../../../shared/conversation/turn-ids.js';

/** The turn a message belongs to: its metadata says, else its id does. */
export function turnOf(message: ChatUIMessage): string {
  if (message.metadata?.chatMessageId !== undefined) return message.metadata.chatMessageId;
  return message.role === 'assistant' ? message.id.replace(/_assistant$/, '') : message.id;
}

export function messageText(message: ChatUIMessage): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

export function fromHistory(messages: readonly HistoryMessage[]): ChatUIMessage[] {
  return messages.map((message): ChatUIMessage => {
    const metadata: ChatMetadata = { chatMessageId: message.chatMessageId };
    if (message.alternatives !== undefined) metadata.alternatives = message.alternatives;
    if (message.role === 'user') {
      if (message.failure !== undefined) metadata.failure = message.failure;
      if (message.useMemory === false) metadata.useMemory = false;
      return {
        id: message.chatMessageId,
        role: 'user',
        metadata,
        parts: [
          ...(message.attachments ?? []).map((file): ChatUIMessage['parts'][number] => ({
            type: 'file',
            mediaType: file.mediaType,
            filename: file.name,
            url: attachmentUrl(file.id),
          })),
          { type: 'text', text: message.content },
        ],
      };
    }
    if (message.finishReason !== undefined) metadata.finishReason = message.finishReason;
    if (message.feedback !== undefined) metadata.feedback = message.feedback.rating;
    if (message.usage !== undefined) metadata['usage'] = message.usage;
    const parts: ChatUIMessage['parts'] = [];
    if (message.reasoning !== undefined) {
      parts.push({ type: 'reasoning', text: message.reasoning.text, state: 'done' });
      if (message.reasoning.durationMs !== undefined) metadata.reasoningMs = message.reasoning.durationMs;
    }
    for (const call of message.toolCalls ?? []) {
      parts.push(
        call.isError
          ? {
              type: 'dynamic-tool',
              toolName: call.name,
              toolCallId: call.id,
              state: 'output-error',
              input: parsedJson(call.arguments),
              errorText: call.result,
            }
          : {
              type: 'dynamic-tool',
              toolName: call.name,
              toolCallId: call.id,
              state: 'output-available',
              input: parsedJson(call.arguments),
              output: parsedJson(call.result),
            },
      );
      // A call whose MCP server the user must connect first shows its Connect button again, as the stream showed it.
      const need = call.isError ? connectNeedOf(call.result) : undefined;
      if (need !== undefined) parts.push({ type: 'data-mcp-connect', data: need });
    }
    for (const source of message.sources ?? [])
      parts.push({
        type: 'source-document',
        sourceId: source.chunkId,
        mediaType: 'text/plain',
        title: source.title,
        providerMetadata: sourceMetadata(source),
      });
    parts.push({ type: 'text', text: message.content, state: 'done' });
    return { id: message.messageId, role: 'assistant', metadata, parts };
  });
}

/** A source's citation and excerpt, as the chunk mapper puts them in its provider metadata. */
export function sourceDetails(part: { providerMetadata?: unknown }): {
  documentId?: string;
  citation?: string;
  excerpt?: string;
} {
  const metadata = part.providerMetadata as Record<string, Record<string, unknown> | undefined> | undefined;
  const details = metadata?.[SOURCE_METADATA_KEY];
  return {
    ...(typeof details?.['documentId'] === 'string' ? { documentId: details['documentId'] } : {}),
    ...(typeof details?.['citation'] === 'string' ? { citation: details['citation'] } : {}),
    ...(typeof details?.['excerpt'] === 'string' ? { excerpt: details['excerpt'] } : {}),
  };
}

/**
 * A source's label: its citation, which usually starts with the document's title ("handbook › Parental leave");
 * the title goes first only when the citation does not name it, so it never shows twice.
 */
export function citationLabel(title: string, citation: string | undefined): string {
  if (citation === undefined || citation === '') return title;
  if (title === '' || citation.toLowerCase().startsWith(title.toLowerCase())) return citation;
  return `${title} › ${citation}`;
}

/**
 * Stored messages, with what the page saw that a message stored before history kept them lacks: the reasoning of an
 * answer (so "Thought for N s" stays once the answer ends), and a message's "Not remembered" mark.
 */
export function keepShown(stored: ChatUIMessage[], shown: readonly ChatUIMessage[]): ChatUIMessage[] {
  const byId = new Map(shown.map((message) => [message.id, message]));
  return stored.map((message) => {
    const seen = byId.get(message.id);
    if (seen === undefined) return message;
    if (message.role === 'user')
      return seen.metadata?.useMemory === false && message.metadata?.useMemory === undefined
        ? { ...message, metadata: { ...message.metadata, useMemory: false } }
        : message;
    const reasoning = seen.parts.filter((part) => part.type === 'reasoning');
    if (reasoning.length === 0 || message.parts.some((part) => part.type === 'reasoning')) return message;
    return { ...message, parts: [...reasoning, ...message.parts] };
  });
}

/** The messages of a conversation read back, with a question the page sent that history does not hold yet last. */
export function withPending(stored: ChatUIMessage[], pending: ChatUIMessage | undefined): ChatUIMessage[] {
  if (pending === undefined || stored.some((message) => message.id === pending.id)) return stored;
  return [...stored, pending];
}
