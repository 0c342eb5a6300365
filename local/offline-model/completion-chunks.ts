// Renders a reply plan as the exact Chat Completions wire shapes: the streamed chunk sequence (role chunk,
// one token per delta, tool-call fragments as OpenAI cuts them, finish chunk, usage chunk) or one completion.
import type { ReplyPlan } from './reply-rules.js';
import { splitJsonFragments, splitWords } from './text-tokens.js';

const SYSTEM_FINGERPRINT = 'offline-stand-in';

export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
  promptTokens: number;
  /** One id per planned tool call. */
  toolCallIds: readonly string[];
  includeUsage: boolean;
  maxTokens?: number;
}

/** A reply cut into tokens, after the max-tokens limit was applied. */
export interface TokenizedReply {
  reasoning: string[];
  content: string[];
  toolCalls: { id: string; name: string; fragments: string[] }[];
  finishReason: 'stop' | 'length' | 'tool_calls';
}

export interface StreamEvent {
  chunk: Record<string, unknown>;
  /** A token-carrying chunk: the server waits the time to first token before the first, then paces them. */
  paced: boolean;
}

export function tokenizeReply(
  plan: ReplyPlan,
  meta: Pick<CompletionMeta, 'toolCallIds' | 'maxTokens'>,
): TokenizedReply {
  let reasoning = splitWords(plan.reasoning);
  let content = splitWords(plan.content);
  const budget = meta.maxTokens ?? Number.POSITIVE_INFINITY;
  const truncated = reasoning.length + content.length > budget;
  if (truncated) {
    reasoning = reasoning.slice(0, budget);
    content = content.slice(0, Math.max(0, budget - reasoning.length));
  }
  const toolCalls = truncated
    ? []
    : plan.toolCalls.map((call, i) => ({
        id: meta.toolCallIds[i] ?? `call_${i}`,
        name: call.name,
        fragments: splitJsonFragments(call.arguments),
      }));
  return {
    reasoning,
    content,
    toolCalls,
    finishReason: truncated ? 'length' : toolCalls.length > 0 ? 'tool_calls' : 'stop',
  };
}

export function streamEvents(reply: TokenizedReply, meta: CompletionMeta): StreamEvent[] {
  const base = {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
  // Like OpenAI with include_usage: every chunk says usage:null until the usage chunk.
  const usageNull = meta.includeUsage ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...usageNull,
  });
  const onlyToolCalls = reply.content.length === 0 && reply.toolCalls.length > 0;

  const events: StreamEvent[] = [
    { chunk: chunk({ role: 'assistant', content: onlyToolCalls ? null : '', refusal: null }), paced: false },
  ];
  for (const text of reply.reasoning) events.push({ chunk: chunk({ reasoning_content: text }), paced: true });
  for (const text of reply.content) events.push({ chunk: chunk({ content: text }), paced: true });
  reply.toolCalls.forEach((call, index) => {
    events.push({
      chunk: chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
      paced: true,
    });
    for (const fragment of call.fragments) {
      events.push({
        chunk: chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }),
        paced: true,
      });
    }
  });
  events.push({ chunk: chunk({}, reply.finishReason), paced: false });
  if (meta.includeUsage)
    events.push({ chunk: { ...base, choices: [], usage: usage(reply, meta) }, paced: false });
  return events;
}

export function completionBody(reply: TokenizedReply, meta: CompletionMeta): Record<string, unknown> {
  const content = reply.content.join('');
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: content === '' && reply.toolCalls.length > 0 ? null : content,
    refusal: null,
  };
  if (reply.reasoning.length > 0) message['reasoning_content'] = reply.reasoning.join('');
  if (reply.toolCalls.length > 0) {
    message['tool_calls'] = reply.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.fragments.join('') },
    }));
  }
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.finishReason }],
    usage: usage(reply, meta),
  };
}

/** Number of token-carrying chunks, i.e. the paced ones of the stream. */
export function pacedTokenCount(reply: TokenizedReply): number {
  return (
    reply.reasoning.length +
    reply.content.length +
    reply.toolCalls.reduce((n, call) => n + 1 + call.fragments.length, 0)
  );
}

function usage(reply: TokenizedReply, meta: CompletionMeta): Record<string, unknown> {
  const completionTokens = pacedTokenCount(reply);
  return {
    prompt_tokens: meta.promptTokens,
    completion_tokens: completionTokens,
    total_tokens: meta.promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reply.reasoning.length },
  };
}
