// Turns a chat turn's events into the AI SDK's UI message stream chunks, live (a `discard` becomes `reset-step`) or
// as a replay of stored events (voided events dropped first). Pure and browser-safe: the web client imports it too.
import type { FinishReason, ProviderMetadata, UIMessageChunk } from 'ai';
import type { KnowledgeSource } from '../conversation/sources.js';
import { assistantMessageId } from '../conversation/turn-ids.js';
import type { ChatEvent } from './contracts.js';
import { keptEvents } from './turn-transcript.js';

/**
 * What the chunks put in the UI message's `metadata`. `start` names the turn; `message-metadata` carries what
 * `message-end` reported (usage, cost and any field it gains later, passed through); `finish` the turn's own
 * finish reason, since the AI SDK admits only its own set; an `error` its code.
 */
export interface UiMessageMetadata {
  sessionId?: string;
  chatMessageId?: string;
  userMessageId?: string;
  assistantMessageId?: string;
  finishReason?: string;
  errorCode?: string;
  [field: string]: unknown;
}

export type UiMessageChunk = UIMessageChunk<UiMessageMetadata>;

/** The finish reason in the metadata of a message's stream that ends because the turn waits for its user's yes. */
export const AWAITING_APPROVAL_FINISH = 'awaiting-approval';

/** The key of `providerMetadata` under which a source-document chunk carries our source's citation and excerpt. */
export const SOURCE_METADATA_KEY = 'knowledge';

/** Our finish reasons in the AI SDK's set; any other is `other` (the original is in the metadata either way). */
const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'length',
  'content-filter': 'content-filter',
  content_filter: 'content-filter',
  'tool-calls': 'tool-calls',
  tool_calls: 'tool-calls',
  // Stopped by its owner: what was generated is the answer the user chose to keep, so the message ended normally.
  cancelled: 'stop',
  error: 'error',
};

export function uiFinishReason(finishReason: string): FinishReason {
  return Object.hasOwn(FINISH_REASONS, finishReason) ? (FINISH_REASONS[finishReason] ?? 'other') : 'other';
}

export interface UiMessageChunkerOptions {
  /**
   * The UI message's id in `start`; by default the answer's message id (`{chatMessageId}_assistant`, as history
   * names it), never the chatMessageId itself, which a client may have given its own user message.
   */
  messageId?: string;
}

/**
 * One turn's converter. Feed it the turn's events in seq order with `push`; it ignores an event whose seq it has
 * seen (a redelivery) and anything after the turn's last event. A model round is one step, so a `discard`
 * (which voids output of the current round's earlier attempt) becomes a `reset-step` followed by the step's kept
 * output again.
 */
export class UiMessageChunker {
  private readonly messageId: string | undefined;
  private readonly seen = new Set<number>();
  private started = false;
  private ended = false;
  /** The current step's events, replayed after a `reset-step` without the ones a `discard` voided. */
  private stepEvents: ChatEvent[] = [];
  /** Set once the current step ran tools: the next model output opens a new step. */
  private stepRanTools = false;
  private openText: string | undefined;
  private openReasoning: string | undefined;
  private sourcesBeforeStep = new Set<string>();
  private sourcesShown = new Set<string>();

  constructor(options: UiMessageChunkerOptions = {}) {
    this.messageId = options.messageId;
  }

  /** Whether the turn's last event (`message-end` or `error`) has been converted. */
  get finished(): boolean {
    return this.ended;
  }

  push(event: ChatEvent): UiMessageChunk[] {
    if (this.ended || this.seen.has(event.seq)) return [];
    this.seen.add(event.seq);
    const chunks: UiMessageChunk[] = [];
    if (!this.started) chunks.push(...this.start(event));
    if (event.type === 'discard') chunks.push(...this.discard(event.fromSeq, event.toSeq));
    else if (event.type !== 'message-start') chunks.push(...this.apply(event));
    return chunks;
  }

  private start(event: ChatEvent): UiMessageChunk[] {
    this.started = true;
    const metadata: UiMessageMetadata = { sessionId: event.sessionId, chatMessageId: event.chatMessageId };
    if (event.type === 'message-start') {
      metadata.userMessageId = event.userMessageId;
      metadata.assistantMessageId = event.assistantMessageId;
    }
    return [
      {
        type: 'start',
        messageId: this.messageId ?? metadata.assistantMessageId ?? assistantMessageId(event.chatMessageId),
        messageMetadata: metadata,
      },
      { type: 'start-step' },
    ];
  }

  private apply(event: ChatEvent): UiMessageChunk[] {
    const chunks: UiMessageChunk[] = [];
    if (
      this.stepRanTools &&
      event.type !== 'tool-result' &&
      event.type !== 'tool-approval-request' &&
      event.type !== 'message-end' &&
      event.type !== 'error'
    ) {
      chunks.push(...this.closeParts(), { type: 'finish-step' }, { type: 'start-step' });
      this.stepEvents = [];
      this.stepRanTools = false;
      this.sourcesBeforeStep = new Set(this.sourcesShown);
    }
    this.stepEvents.push(event);
    switch (event.type) {
      case 'reasoning-delta':
        if (this.openText !== undefined) chunks.push(...this.closeText());
        if (this.openReasoning === undefined) {
          this.openReasoning = `${event.chatMessageId}-reasoning-${String(event.seq)}`;
          chunks.push({ type: 'reasoning-start', id: this.openReasoning });
        }
        chunks.push({ type: 'reasoning-delta', id: this.openReasoning, delta: event.delta });
        break;
      case 'reasoning-end':
        chunks.push(...this.closeReasoning());
        break;
      case 'content':
        if (this.openReasoning !== undefined) chunks.push(...this.closeReasoning());
        if (this.openText === undefined) {
          this.openText = `${event.chatMessageId}-text-${String(event.seq)}`;
          chunks.push({ type: 'text-start', id: this.openText });
        }
        chunks.push({ type: 'text-delta', id: this.openText, delta: event.delta });
        break;
      case 'tool-call':
        chunks.push(...this.closeParts(), {
          type: 'tool-input-available',
          toolCallId: event.toolCallId,
          toolName: event.name,
          input: parsedJson(event.arguments),
          // Run by the server, named at run time: the client runs nothing and needs no tool types for them.
          dynamic: true,
          providerExecuted: true,
        });
        break;
      case 'tool-approval-request':
        chunks.push({
          type: 'tool-approval-request',
          approvalId: event.approvalId,
          toolCallId: event.toolCallId,
        });
        break;
      case 'tool-result':
        this.stepRanTools = true;
        chunks.push(
          event.denied === true
            ? { type: 'tool-output-denied', toolCallId: event.toolCallId }
            : event.isError
              ? {
                  type: 'tool-output-error',
                  toolCallId: event.toolCallId,
                  errorText: event.result,
                  dynamic: true,
                  providerExecuted: true,
                }
              : {
                  type: 'tool-output-available',
                  toolCallId: event.toolCallId,
                  output: parsedJson(event.result),
                  dynamic: true,
                  providerExecuted: true,
                },
        );
        // The page turns it into a Connect button for the server (its own data part, outside the tool's output).
        if (event.connect !== undefined) chunks.push({ type: 'data-mcp-connect', data: event.connect });
        break;
      case 'sources':
        chunks.push(...this.sourceChunks(event.sources));
        break;
      case 'message-end':
        chunks.push(...this.end(event));
        break;
      case 'error':
        chunks.push(...this.fail(event));
        break;
      case 'message-start':
      case 'discard':
        break;
    }
    return chunks;
  }

  /** Live: the step's output is reset and what of it the discard leaves is streamed again. */
  private discard(fromSeq: number, toSeq: number): UiMessageChunk[] {
    const voided = (event: ChatEvent) =>
      (event.type === 'content' ||
        event.type === 'reasoning-delta' ||
        event.type === 'reasoning-end' ||
        event.type === 'tool-call') &&
      fromSeq <= event.seq &&
      event.seq <= toSeq;
    // Nothing this reader showed is voided (it joined after, or replays kept events only): nothing to undo.
    if (!this.stepEvents.some(voided)) return [];
    const kept = this.stepEvents.filter((event) => !voided(event));
    this.stepEvents = [];
    this.openText = undefined;
    this.openReasoning = undefined;
    this.sourcesShown = new Set(this.sourcesBeforeStep);
    this.stepRanTools = false;
    const chunks: UiMessageChunk[] = [{ type: 'reset-step' }];
    for (const event of kept) chunks.push(...this.apply(event));
    return chunks;
  }

  /** A `sources` event lists all the turn's sources so far; the UI message gains those it does not show yet. */
  private sourceChunks(sources: readonly KnowledgeSource[]): UiMessageChunk[] {
    const fresh = sources.filter((source) => !this.sourcesShown.has(source.chunkId));
    for (const source of fresh) this.sourcesShown.add(source.chunkId);
    return fresh.map((source) => ({
      type: 'source-document',
      sourceId: source.chunkId,
      mediaType: 'text/plain',
      title: source.title,
      providerMetadata: sourceMetadata(source),
    }));
  }

  /**
   * The turn waits for its user's yes: this stream of its message ends here (`finish`, reason `tool-calls`), and the
   * message goes on, under the same id, in the stream that follows the answer.
   */
  pause(): UiMessageChunk[] {
    if (this.ended || !this.started) return [];
    this.ended = true;
    return [
      ...this.closeParts(),
      { type: 'finish-step' },
      {
        type: 'finish',
        finishReason: 'tool-calls',
        messageMetadata: { finishReason: AWAITING_APPROVAL_FINISH },
      },
    ];
  }

  private end(event: Extract<ChatEvent, { type: 'message-end' }>): UiMessageChunk[] {
    this.ended = true;
    // Every field but the envelope goes to the client: usage, cost, and whatever message-end carries later.
    const reported: Record<string, unknown> = { ...event };
    for (const field of ['type', 'sessionId', 'chatMessageId', 'seq', 'finishReason']) delete reported[field];
    const { finishReason } = event;
    return [
      ...this.closeParts(),
      { type: 'finish-step' },
      { type: 'message-metadata', messageMetadata: reported },
      { type: 'finish', finishReason: uiFinishReason(finishReason), messageMetadata: { finishReason } },
    ];
  }

  private fail(event: Extract<ChatEvent, { type: 'error' }>): UiMessageChunk[] {
    this.ended = true;
    return [
      ...this.closeParts(),
      { type: 'finish-step' },
      { type: 'error', errorText: event.message },
      {
        type: 'finish',
        finishReason: 'error',
        messageMetadata: { finishReason: 'error', errorCode: event.code },
      },
    ];
  }

  private closeParts(): UiMessageChunk[] {
    return [...this.closeReasoning(), ...this.closeText()];
  }

  private closeText(): UiMessageChunk[] {
    const id = this.openText;
    this.openText = undefined;
    return id === undefined ? [] : [{ type: 'text-end', id }];
  }

  private closeReasoning(): UiMessageChunk[] {
    const id = this.openReasoning;
    this.openReasoning = undefined;
    return id === undefined ? [] : [{ type: 'reasoning-end', id }];
  }
}

/**
 * A turn's stored events as one UI message stream: the events a `discard` voided are dropped first, so the
 * stream shows the committed answer once, with no `reset-step`. It is complete when the turn has ended.
 */
export function replayUiMessageChunks(
  events: readonly ChatEvent[],
  options: UiMessageChunkerOptions = {},
): UiMessageChunk[] {
  const chunker = new UiMessageChunker(options);
  const ordered = [...events].sort((a, b) => a.seq - b.seq);
  return keptEvents(ordered).flatMap((event) => chunker.push(event));
}

/** A source's provider metadata on its `source-document` chunk or part (the web client's reload builds the same). */
export function sourceMetadata(source: KnowledgeSource): ProviderMetadata {
  return {
    [SOURCE_METADATA_KEY]: {
      documentId: source.documentId,
      citation: source.citation,
      excerpt: source.excerpt,
      score: source.score,
      ...(source.heading === undefined ? {} : { heading: source.heading }),
      ...(source.pages === undefined ? {} : { pages: source.pages }),
    },
  };
}

/** A tool's arguments or result as JSON when they are JSON (they usually are), else the text itself. */
export function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
