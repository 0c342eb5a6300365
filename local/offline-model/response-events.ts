// Renders a reply plan as the exact Responses API wire shapes, as OpenAI and Azure send them
// (test/fixtures/llm-wire/*-responses-*): the streamed events, or one response object.
import type { StreamEvent, TokenizedReply } from './completion-chunks.js';
import { pacedTokenCount, tokenizeReply } from './completion-chunks.js';
import type { ReplyPlan } from './reply-rules.js';

export interface ResponseMeta {
  /** `resp_…`; item ids are derived from it. */
  id: string;
  createdAt: number;
  model: string;
  promptTokens: number;
  /** One `call_…` id per planned tool call. */
  toolCallIds: readonly string[];
  /** Whether the request asked for a reasoning summary (`reasoning.summary`). */
  summarize: boolean;
  maxOutputTokens?: number;
}

/** The title each reasoning step's summary part starts with, as OpenAI's summaries do (`**Title**\n\n…`). */
const SUMMARY_TITLES = ['Reading the message', 'Planning the answer'];

/** A plan cut into tokens, its reasoning as summary parts (each token belongs to one part). */
export interface TokenizedResponse {
  reply: TokenizedReply;
  /** The reasoning tokens of each summary part, in order. */
  summaryParts: string[][];
}

export function tokenizeResponse(plan: ReplyPlan, meta: ResponseMeta): TokenizedResponse {
  const parts = (plan.reasoningParts ?? (plan.reasoning === '' ? [] : [plan.reasoning])).map(
    (text, index) => `**${SUMMARY_TITLES[index] ?? 'Thinking'}**\n\n${text}`,
  );
  const reply = tokenizeReply(
    { ...plan, reasoning: parts.join('') },
    {
      toolCallIds: meta.toolCallIds,
      ...(meta.maxOutputTokens !== undefined ? { maxTokens: meta.maxOutputTokens } : {}),
    },
  );
  // Each part starts with `*`, a token of its own, so part boundaries fall between tokens.
  const summaryParts: string[][] = [];
  let token = 0;
  for (const part of parts) {
    const tokens: string[] = [];
    let length = 0;
    while (token < reply.reasoning.length && length < part.length) {
      const text = reply.reasoning[token++]!;
      tokens.push(text);
      length += text.length;
    }
    if (tokens.length > 0) summaryParts.push(tokens);
  }
  return { reply, summaryParts };
}

export function responseEvents(response: TokenizedResponse, meta: ResponseMeta): StreamEvent[] {
  const { reply, summaryParts } = response;
  const events: StreamEvent[] = [];
  const emit = (event: Record<string, unknown>, paced = false) =>
    events.push({ chunk: { ...event, sequence_number: events.length }, paced });
  const inProgress = { ...responseObject(response, meta, 'in_progress'), output: [], usage: null };
  emit({ type: 'response.created', response: inProgress });
  emit({ type: 'response.in_progress', response: inProgress });

  outputItems(response, meta).forEach((item, outputIndex) => {
    const itemId = item['id'] as string;
    switch (item['type']) {
      case 'reasoning': {
        emit({
          type: 'response.output_item.added',
          output_index: outputIndex,
          item: { ...item, summary: [] },
        });
        if (meta.summarize)
          summaryParts.forEach((tokens, summaryIndex) => {
            const where = { item_id: itemId, output_index: outputIndex, summary_index: summaryIndex };
            const text = tokens.join('');
            emit({
              type: 'response.reasoning_summary_part.added',
              ...where,
              part: { type: 'summary_text', text: '' },
            });
            for (const delta of tokens)
              emit({ type: 'response.reasoning_summary_text.delta', ...where, delta }, true);
            emit({ type: 'response.reasoning_summary_text.done', ...where, text });
            emit({
              type: 'response.reasoning_summary_part.done',
              ...where,
              part: { type: 'summary_text', text },
            });
          });
        emit({ type: 'response.output_item.done', output_index: outputIndex, item });
        break;
      }
      case 'message': {
        const text = reply.content.join('');
        const where = { item_id: itemId, output_index: outputIndex, content_index: 0 };
        const part = { type: 'output_text', annotations: [], logprobs: [] };
        emit({
          type: 'response.output_item.added',
          output_index: outputIndex,
          item: { ...item, status: 'in_progress', content: [] },
        });
        emit({ type: 'response.content_part.added', ...where, part: { ...part, text: '' } });
        for (const delta of reply.content)
          emit({ type: 'response.output_text.delta', ...where, delta, logprobs: [] }, true);
        emit({ type: 'response.output_text.done', ...where, text, logprobs: [] });
        emit({ type: 'response.content_part.done', ...where, part: { ...part, text } });
        emit({ type: 'response.output_item.done', output_index: outputIndex, item });
        break;
      }
      case 'function_call': {
        const call = reply.toolCalls.find((c) => c.id === item['call_id']);
        emit(
          {
            type: 'response.output_item.added',
            output_index: outputIndex,
            item: { ...item, status: 'in_progress', arguments: '' },
          },
          true,
        );
        for (const delta of call?.fragments ?? [])
          emit(
            {
              type: 'response.function_call_arguments.delta',
              item_id: itemId,
              output_index: outputIndex,
              delta,
            },
            true,
          );
        emit({
          type: 'response.function_call_arguments.done',
          item_id: itemId,
          output_index: outputIndex,
          arguments: item['arguments'],
        });
        emit({ type: 'response.output_item.done', output_index: outputIndex, item });
        break;
      }
    }
  });

  const final = responseObject(response, meta);
  emit({
    type: final.status === 'incomplete' ? 'response.incomplete' : 'response.completed',
    response: final,
  });
  return events;
}

/** The whole response, as the non-streamed answer and the terminal event carry it. */
export function responseObject(
  response: TokenizedResponse,
  meta: ResponseMeta,
  status?: 'in_progress',
): Record<string, unknown> & { status: string } {
  const { reply } = response;
  const incomplete = reply.finishReason === 'length';
  const outputTokens = pacedTokenCount(reply);
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    status: status ?? (incomplete ? 'incomplete' : 'completed'),
    error: null,
    incomplete_details: incomplete && status === undefined ? { reason: 'max_output_tokens' } : null,
    model: meta.model,
    output: outputItems(response, meta),
    parallel_tool_calls: true,
    store: false,
    usage: {
      input_tokens: meta.promptTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: reply.reasoning.length },
      total_tokens: meta.promptTokens + outputTokens,
    },
  };
}

/** Reasoning (when the plan reasons), the message (when it has text), then each function call. */
function outputItems(response: TokenizedResponse, meta: ResponseMeta): Record<string, unknown>[] {
  const { reply, summaryParts } = response;
  const items: Record<string, unknown>[] = [];
  if (reply.reasoning.length > 0)
    items.push({
      id: `rs_${meta.id.slice('resp_'.length)}`,
      type: 'reasoning',
      // Without a summary request the reasoning item says nothing, yet its tokens count (as OpenAI's do).
      summary: meta.summarize
        ? summaryParts.map((tokens) => ({ type: 'summary_text', text: tokens.join('') }))
        : [],
    });
  if (reply.content.length > 0)
    items.push({
      id: `msg_${meta.id.slice('resp_'.length)}`,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: reply.content.join('') }],
    });
  reply.toolCalls.forEach((call, index) =>
    items.push({
      id: `fc_${meta.id.slice('resp_'.length)}${index}`,
      type: 'function_call',
      status: 'completed',
      arguments: call.fragments.join(''),
      call_id: call.id,
      name: call.name,
    }),
  );
  return items;
}
