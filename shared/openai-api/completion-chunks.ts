// A turn's events as Chat Completions speaks them: each event as the chunks a streamed answer sends, and the kept
// events of an ended turn as one completion. Pure: the stream and the JSON answer both come from here.
import type { LlmUsage } from '../llm/llm-gateway.js';
import type { ChatEvent } from '../streaming/contracts.js';
import { keptEvents } from '../streaming/turn-transcript.js';
import type { ChatCompletion, ChatCompletionChunk, CompletionUsage } from './contracts.js';
import { openAiErrorType } from '../http/openai-error.js';

/** What every chunk of one answer repeats. */
export interface CompletionMeta {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
  includeUsage: boolean;
  /** The client's tools: the turn's calls of these are handed back; its own calls are not shown. */
  clientTools: readonly string[];
}

/** An error as OpenAI's stream and error bodies carry it. */
export interface TurnErrorBody {
  error: { message: string; type: string; code: string; param: null };
}

/** The finish reasons OpenAI's clients know; a stop, a cancel or a spent tool budget reads as `stop`. */
export function wireFinishReason(finishReason: string): string {
  return ['stop', 'length', 'content_filter', 'tool_calls'].includes(finishReason) ? finishReason : 'stop';
}

export function wireUsage(usage: LlmUsage): CompletionUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    ...(usage.cachedPromptTokens === undefined
      ? {}
      : { prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens } }),
    ...(usage.reasoningTokens === undefined
      ? {}
      : { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }),
  };
}

export function turnErrorBody(event: Extract<ChatEvent, { type: 'error' }>): TurnErrorBody {
  return { error: { message: event.message, type: openAiErrorType(500), code: event.code, param: null } };
}

/**
 * The chunks (or the error body) one event of the turn is sent as; nothing for events a client does not see.
 * `handedBack` counts the client's tool calls sent so far (each chunk of one names its index).
 */
export function chunksOf(
  meta: CompletionMeta,
  event: ChatEvent,
  handedBack = { calls: 0 },
): (ChatCompletionChunk | TurnErrorBody)[] {
  const chunk = (
    delta: ChatCompletionChunk['choices'][number]['delta'],
    finishReason: string | null = null,
  ): ChatCompletionChunk => ({
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  switch (event.type) {
    case 'message-start':
      return [chunk({ role: 'assistant', content: '' })];
    case 'content':
      return [chunk({ content: event.delta })];
    case 'reasoning-delta':
      return [chunk({ reasoning_content: event.delta })];
    case 'tool-call': {
      if (!meta.clientTools.includes(event.name)) return [];
      const index = handedBack.calls++;
      return [chunk({ tool_calls: [{ index, ...wireToolCall(event) }] })];
    }
    case 'message-end': {
      const end = chunk({}, wireFinishReason(event.finishReason));
      if (!meta.includeUsage || event.usage === undefined) return [end];
      return [
        end,
        {
          id: meta.id,
          object: 'chat.completion.chunk',
          created: meta.created,
          model: meta.model,
          choices: [],
          usage: wireUsage(event.usage),
        },
      ];
    }
    case 'error':
      return [turnErrorBody(event)];
    default:
      return [];
  }
}

/** The completion of an ended turn: its kept text and reasoning, finish reason and usage. */
export function completionOf(meta: CompletionMeta, events: readonly ChatEvent[]): ChatCompletion {
  const kept = [...keptEvents(events)].sort((a, b) => a.seq - b.seq);
  const text = (type: 'content' | 'reasoning-delta') =>
    kept.map((event) => (event.type === type ? event.delta : '')).join('');
  const end = kept.findLast((event) => event.type === 'message-end');
  const reasoning = text('reasoning-delta');
  const content = text('content');
  const calls = kept.flatMap((event) =>
    event.type === 'tool-call' && meta.clientTools.includes(event.name) ? [wireToolCall(event)] : [],
  );
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: content === '' && calls.length > 0 ? null : content,
          ...(reasoning === '' ? {} : { reasoning_content: reasoning }),
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        },
        finish_reason: wireFinishReason(end?.type === 'message-end' ? end.finishReason : 'stop'),
        logprobs: null,
      },
    ],
    ...(end?.type === 'message-end' && end.usage !== undefined ? { usage: wireUsage(end.usage) } : {}),
  };
}

function wireToolCall(event: Extract<ChatEvent, { type: 'tool-call' }>) {
  return {
    id: event.toolCallId,
    type: 'function' as const,
    function: { name: event.name, arguments: event.arguments },
  };
}
