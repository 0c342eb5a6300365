// A turn's events as the Responses API speaks them: the stream's typed events (created, the message item and its
// text deltas, the client's function calls, completed or failed) and the response object they end with. Pure.
import type { ChatEvent } from '../streaming/contracts.js';
import { keptEvents } from '../streaming/turn-transcript.js';
import type { CompletionMeta } from './completion-chunks.js';
import type { ResponseObject, ResponseOutputItem } from './responses-contracts.js';

export interface ResponseMeta extends CompletionMeta {
  previousResponseId: string | null;
  instructions: string | null;
}

type StreamEvent = { type: string } & Record<string, unknown>;

/** The response as it stands: its output items, usage, status and error. */
export function responseObject(
  meta: ResponseMeta,
  fields: Pick<ResponseObject, 'status' | 'output' | 'usage' | 'error'>,
): ResponseObject {
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.created,
    model: meta.model,
    previous_response_id: meta.previousResponseId,
    incomplete_details: null,
    instructions: meta.instructions,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    metadata: {},
    ...fields,
  };
}

function usageOf(event: Extract<ChatEvent, { type: 'message-end' }>): ResponseObject['usage'] {
  const usage = event.usage;
  if (usage === undefined) return null;
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedPromptTokens ?? 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.totalTokens,
  };
}

function messageItem(meta: ResponseMeta, text: string, status: string): ResponseOutputItem {
  return {
    type: 'message',
    id: `msg_${meta.id.slice('resp_'.length)}`,
    status,
    role: 'assistant',
    content: status === 'in_progress' ? [] : [{ type: 'output_text', text, annotations: [] }],
  };
}

function callItem(event: Extract<ChatEvent, { type: 'tool-call' }>): ResponseOutputItem {
  return {
    type: 'function_call',
    id: `fc_${event.toolCallId}`,
    call_id: event.toolCallId,
    name: event.name,
    arguments: event.arguments,
    status: 'completed',
  };
}

/** The output of an ended turn: its kept text as one message (when it has text), then the client's calls. */
export function outputOf(meta: ResponseMeta, events: readonly ChatEvent[]): ResponseOutputItem[] {
  const kept = [...keptEvents(events)].sort((a, b) => a.seq - b.seq);
  const text = kept.map((event) => (event.type === 'content' ? event.delta : '')).join('');
  const calls = kept.flatMap((event) =>
    event.type === 'tool-call' && meta.clientTools.includes(event.name) ? [callItem(event)] : [],
  );
  return [...(text !== '' || calls.length === 0 ? [messageItem(meta, text, 'completed')] : []), ...calls];
}

/** The response of an ended turn, completed or failed. */
export function endedResponse(meta: ResponseMeta, events: readonly ChatEvent[]): ResponseObject {
  const failure = events.find((event) => event.type === 'error');
  const end = events.find((event) => event.type === 'message-end');
  return responseObject(meta, {
    status: failure === undefined ? 'completed' : 'failed',
    output: outputOf(meta, events),
    usage: end?.type === 'message-end' ? usageOf(end) : null,
    error: failure?.type === 'error' ? { code: failure.code, message: failure.message } : null,
  });
}

/** Frames a turn's events, one at a time, as the Responses API's stream events (`event:` and `data:`). */
export class ResponseEventFramer {
  private sequence = 0;
  private text = '';
  private messageOpen = false;
  private readonly events: ChatEvent[] = [];

  constructor(private readonly meta: ResponseMeta) {}

  push(event: ChatEvent): string {
    this.events.push(event);
    const out: StreamEvent[] = [];
    const item = { item_id: messageItem(this.meta, '', 'in_progress').id, output_index: 0, content_index: 0 };
    switch (event.type) {
      case 'message-start':
        out.push({
          type: 'response.created',
          response: responseObject(this.meta, {
            status: 'in_progress',
            output: [],
            usage: null,
            error: null,
          }),
        });
        break;
      case 'content':
        if (!this.messageOpen) {
          this.messageOpen = true;
          out.push(
            {
              type: 'response.output_item.added',
              output_index: 0,
              item: messageItem(this.meta, '', 'in_progress'),
            },
            {
              type: 'response.content_part.added',
              ...item,
              part: { type: 'output_text', text: '', annotations: [] },
            },
          );
        }
        this.text += event.delta;
        out.push({ type: 'response.output_text.delta', ...item, delta: event.delta, logprobs: [] });
        break;
      case 'message-end':
      case 'error': {
        const ended = endedResponse(this.meta, this.events);
        if (this.messageOpen) {
          const part = { type: 'output_text', text: this.text, annotations: [] };
          out.push(
            { type: 'response.output_text.done', ...item, text: this.text, logprobs: [] },
            { type: 'response.content_part.done', ...item, part },
            {
              type: 'response.output_item.done',
              output_index: 0,
              item: messageItem(this.meta, this.text, 'completed'),
            },
          );
        }
        const calls = ended.output.filter((output) => output.type === 'function_call');
        const first = this.messageOpen ? 1 : 0;
        for (const [position, call] of calls.entries())
          out.push(
            { type: 'response.output_item.added', output_index: first + position, item: call },
            { type: 'response.output_item.done', output_index: first + position, item: call },
          );
        out.push({
          type: event.type === 'error' ? 'response.failed' : 'response.completed',
          response: ended,
        });
        break;
      }
      default:
        break;
    }
    return out
      .map((frame) => {
        const data = { ...frame, sequence_number: this.sequence++ };
        return `event: ${frame.type}\ndata: ${JSON.stringify(data)}\n\n`;
      })
      .join('');
  }
}
