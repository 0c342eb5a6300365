// Pure assembly of streamed Responses API events into one step, tolerant of every quirk recorded in
// test/fixtures/llm-wire/README.md (16-26). No I/O: the gateway feeds it parsed events.
import type { LlmDelta, LlmReply, LlmUsage, ToolCall } from './llm-gateway.js';
import { isRecord, nonEmptyString, readUsage, type UsageFields } from './wire-reading.js';

export const USAGE_FIELDS: UsageFields = {
  input: 'input_tokens',
  output: 'output_tokens',
  inputDetails: 'input_tokens_details',
  outputDetails: 'output_tokens_details',
};

/** How the response ended: the terminal event's status, or undefined while none has arrived. */
export type ResponseStatus = 'completed' | 'incomplete' | 'failed';

/** What the provider said went wrong, from the `error` event and/or `response.failed`. */
export interface ResponseFailure {
  code?: string;
  message: string;
  /** The error event's `type` (e.g. `insufficient_quota`), when it has one. */
  type?: string;
}

interface FunctionCallSlot {
  itemId: string;
  /** Order of appearance among the response's function calls: the `index` of its `tool-call` delta. */
  index: number;
  callId: string;
  name: string;
  arguments: string;
  /** Whether any argument delta arrived (then `.done` events are only a check). */
  streamed: boolean;
  announced: boolean;
}

interface SummaryPart {
  text: string;
  closed: boolean;
}

/**
 * How it reads the stream, each rule tied to a quirk number of test/fixtures/llm-wire/README.md:
 * - events are told apart by `data.type` only; key order, `sequence_number` and the `event:` line are not read, and
 *   only a terminal event (`response.completed`, `.incomplete`, `.failed`) ends the step (16);
 * - text comes only from `response.output_text.delta`, summaries from `response.reasoning_summary_text.delta`,
 *   arguments from `response.function_call_arguments.delta`; `.done` events and the terminal event's output are
 *   read only for an item that streamed no deltas of that kind (a server that sends whole items), never added to
 *   streamed text (17);
 * - state is keyed by `item_id` (the item's `id` in `output_item.*`), never by output_index or "the current item";
 *   a function call's name and call_id come from its item, its arguments from deltas naming the item (18, 22);
 * - a summary part is keyed by item and `summary_index`; each part closes once, with a `reasoning-end` delta, and
 *   parts are kept apart in `reasoningParts` while `reasoning` is their plain concatenation (19);
 * - reasoning tokens may come without any reasoning text; encrypted reasoning is never read (20, 21);
 * - usage is read from the terminal event's `response.usage` (`input_tokens`, `output_tokens`, their details),
 *   `null` meaning absent (23);
 * - an `error` event is kept, whether its details sit at the top level or under `error`, and reading goes on: the
 *   `response.failed` that follows is the end (24);
 * - unknown keys (Azure's `content_filters`, `obfuscation`, `logprobs`) and unknown event types are ignored (25, 26).
 */
export class ResponsesStreamAssembler {
  #content = '';
  /** Message items that streamed text deltas: their `.done` text must not be added again. */
  readonly #streamedMessages = new Set<string>();
  readonly #calls = new Map<string, FunctionCallSlot>();
  /** Summary parts in order of appearance, keyed `${itemId}#${summaryIndex}`. */
  readonly #parts = new Map<string, SummaryPart>();
  /** Reasoning items that streamed summary (or reasoning text) deltas. */
  readonly #streamedReasoning = new Set<string>();
  #status: ResponseStatus | undefined;
  #incompleteReason: string | undefined;
  #failure: ResponseFailure | undefined;
  #usage: LlmUsage | undefined;
  #model: string | undefined;

  /** Whether a terminal event arrived; a stream that ends without one was cut off. */
  get finished(): boolean {
    return this.#status !== undefined;
  }

  /** The terminal status, or undefined while the response is still streaming. */
  get status(): ResponseStatus | undefined {
    return this.#status;
  }

  /**
   * Why the response failed: set by an `error` event (which may come before `response.failed`) or by
   * `response.failed` itself; the error event's words win, as they are the more specific.
   */
  get failure(): ResponseFailure | undefined {
    return this.#failure;
  }

  /** The `fc_…` item ids of the function calls, in the order of result().toolCalls (their `call_…` ids). */
  get toolCallItemIds(): string[] {
    return this.#namedCalls().map((slot) => slot.itemId);
  }

  /** Takes one parsed event and returns the deltas it adds, in order. */
  push(event: unknown): LlmDelta[] {
    if (!isRecord(event)) return [];
    const deltas: LlmDelta[] = [];
    switch (event['type']) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        this.#readResponse(event['response']);
        break;
      case 'response.output_item.added':
        this.#readItem(event['item'], deltas, false);
        break;
      case 'response.output_item.done':
        this.#readItem(event['item'], deltas, true);
        break;
      case 'response.output_text.delta': {
        const itemId = stringOr(event['item_id'], '');
        const text = nonEmptyString(event['delta']);
        if (text !== undefined) {
          this.#streamedMessages.add(itemId);
          this.#content += text;
          deltas.push({ type: 'content', text });
        }
        break;
      }
      case 'response.reasoning_summary_part.added':
        this.#part(event);
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const text = nonEmptyString(event['delta']);
        if (text === undefined) break;
        this.#streamedReasoning.add(stringOr(event['item_id'], ''));
        this.#part(event).text += text;
        deltas.push({ type: 'reasoning', text });
        break;
      }
      case 'response.reasoning_summary_text.done':
      case 'response.reasoning_summary_part.done':
      case 'response.reasoning_text.done':
        this.#closePart(this.#part(event), deltas);
        break;
      case 'response.function_call_arguments.delta': {
        const slot = this.#slot(stringOr(event['item_id'], ''), deltas);
        const args = event['delta'];
        if (typeof args === 'string' && args !== '') {
          slot.arguments += args;
          slot.streamed = true;
        }
        break;
      }
      case 'response.function_call_arguments.done': {
        const slot = this.#slot(stringOr(event['item_id'], ''), deltas);
        const args = event['arguments'];
        if (!slot.streamed && typeof args === 'string') slot.arguments = args;
        break;
      }
      case 'error':
        // Details at the top level (openai-python's ResponseErrorEvent) or nested under `error` (the wire).
        this.#failure ??= readFailure(isRecord(event['error']) ? event['error'] : event);
        break;
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        this.#finish(event, deltas);
        break;
    }
    return deltas;
  }

  /** The assembled step; `finishReason` overrides the status's (used for `cancelled`). */
  result(finishReason?: string): LlmReply {
    const toolCalls: ToolCall[] = this.#namedCalls().map((slot) => ({
      id: slot.callId === '' ? slot.itemId : slot.callId,
      name: slot.name,
      // "{}" is what a tool executor can parse when a call has no arguments.
      arguments: slot.arguments === '' ? '{}' : slot.arguments,
    }));
    const parts = [...this.#parts.values()].map((part) => part.text).filter((text) => text !== '');
    const result: LlmReply = {
      content: this.#content,
      reasoning: parts.join(''),
      toolCalls,
      finishReason: finishReason ?? this.#finishReason(toolCalls.length > 0),
    };
    if (parts.length > 0) result.reasoningParts = parts;
    if (this.#usage) result.usage = this.#usage;
    if (this.#model !== undefined) result.model = this.#model;
    return result;
  }

  /** Calls whose name is known (a call without one cannot be run), in order of appearance. */
  #namedCalls(): FunctionCallSlot[] {
    return [...this.#calls.values()].filter((slot) => slot.name !== '').sort((a, b) => a.index - b.index);
  }

  #finishReason(hasCalls: boolean): string {
    switch (this.#status) {
      case 'completed':
        return hasCalls ? 'tool_calls' : 'stop';
      case 'incomplete':
        // The Responses API's reasons, in Chat Completions' words (the turn's finish reasons use those).
        if (this.#incompleteReason === 'max_output_tokens') return 'length';
        return this.#incompleteReason ?? 'length';
      case 'failed':
        return 'error';
      case undefined:
        return hasCalls ? 'tool_calls' : 'unknown';
    }
  }

  #readResponse(response: unknown): void {
    if (!isRecord(response)) return;
    const model = nonEmptyString(response['model']);
    if (this.#model === undefined && model !== undefined) this.#model = model;
    const usage = readUsage(response['usage'], USAGE_FIELDS);
    if (usage) this.#usage = usage;
  }

  #finish(event: Record<string, unknown>, deltas: LlmDelta[]): void {
    const type = event['type'] as string;
    const response = isRecord(event['response']) ? event['response'] : {};
    this.#readResponse(response);
    // Items the server sent only as whole objects in the terminal event (no added/done events of their own).
    const output = response['output'];
    if (Array.isArray(output)) for (const item of output) this.#readItem(item, deltas, true);
    for (const part of this.#parts.values()) this.#closePart(part, deltas);
    const status = type.slice('response.'.length) as ResponseStatus;
    this.#status = status;
    if (status === 'incomplete') {
      const details = response['incomplete_details'];
      this.#incompleteReason = isRecord(details) ? nonEmptyString(details['reason']) : undefined;
    }
    if (status === 'failed') {
      const error = response['error'];
      this.#failure ??= isRecord(error)
        ? readFailure(error)
        : { message: 'The response failed without saying why.' };
    }
  }

  /** An output item from `output_item.added` / `.done` (or the terminal event's output). */
  #readItem(item: unknown, deltas: LlmDelta[], done: boolean): void {
    if (!isRecord(item)) return;
    const itemId = stringOr(item['id'], '');
    switch (item['type']) {
      case 'function_call': {
        const slot = this.#calls.get(itemId) ?? this.#newSlot(itemId);
        const callId = nonEmptyString(item['call_id']);
        if (callId !== undefined && slot.callId === '') slot.callId = callId;
        const name = nonEmptyString(item['name']);
        if (name !== undefined && slot.name === '') slot.name = name;
        const args = item['arguments'];
        if (done && !slot.streamed && typeof args === 'string' && slot.arguments === '')
          slot.arguments = args;
        this.#announce(slot, deltas);
        break;
      }
      case 'message': {
        if (!done || this.#streamedMessages.has(itemId)) break;
        // A message that streamed no text: its whole text is what it said.
        this.#streamedMessages.add(itemId);
        const text = messageText(item['content']);
        if (text !== '') {
          this.#content += text;
          deltas.push({ type: 'content', text });
        }
        break;
      }
      case 'reasoning': {
        if (!done || this.#streamedReasoning.has(itemId)) break;
        this.#streamedReasoning.add(itemId);
        const summary = item['summary'];
        if (!Array.isArray(summary)) break;
        summary.forEach((entry, summaryIndex) => {
          const text = isRecord(entry) ? nonEmptyString(entry['text']) : undefined;
          if (text === undefined) return;
          const part = this.#part({ item_id: itemId, summary_index: summaryIndex });
          if (part.text !== '') return;
          part.text = text;
          deltas.push({ type: 'reasoning', text });
          this.#closePart(part, deltas);
        });
        break;
      }
    }
  }

  /**
   * The part an event names: item_id + summary_index for summaries, item_id + content_index for the raw reasoning
   * text that open-weight models' servers stream (`response.reasoning_text.*`).
   */
  #part(event: Record<string, unknown>): SummaryPart {
    const itemId = stringOr(event['item_id'], '');
    const summaryIndex = event['summary_index'];
    const contentIndex = event['content_index'];
    const key =
      typeof summaryIndex === 'number'
        ? `${itemId}#summary-${summaryIndex}`
        : `${itemId}#content-${typeof contentIndex === 'number' ? contentIndex : 0}`;
    let part = this.#parts.get(key);
    if (!part) {
      part = { text: '', closed: false };
      this.#parts.set(key, part);
    }
    return part;
  }

  /** Closes a part once; a part without text stays open (its text may still come whole, with its item). */
  #closePart(part: SummaryPart, deltas: LlmDelta[]): void {
    if (part.closed || part.text === '') return;
    part.closed = true;
    deltas.push({ type: 'reasoning-end' });
  }

  #slot(itemId: string, deltas: LlmDelta[]): FunctionCallSlot {
    const slot = this.#calls.get(itemId) ?? this.#newSlot(itemId);
    this.#announce(slot, deltas);
    return slot;
  }

  #newSlot(itemId: string): FunctionCallSlot {
    const slot: FunctionCallSlot = {
      itemId,
      index: this.#calls.size,
      callId: '',
      name: '',
      arguments: '',
      streamed: false,
      announced: false,
    };
    this.#calls.set(itemId, slot);
    return slot;
  }

  #announce(slot: FunctionCallSlot, deltas: LlmDelta[]): void {
    if (slot.announced || slot.name === '') return;
    slot.announced = true;
    deltas.push({
      type: 'tool-call',
      index: slot.index,
      id: slot.callId === '' ? slot.itemId : slot.callId,
      name: slot.name,
    });
  }
}

function readFailure(error: Record<string, unknown>): ResponseFailure {
  const failure: ResponseFailure = {
    message: nonEmptyString(error['message']) ?? 'The response failed without saying why.',
  };
  const code = error['code'];
  if (typeof code === 'string' && code !== '') failure.code = code;
  else if (typeof code === 'number') failure.code = String(code);
  const type = nonEmptyString(error['type']);
  if (type !== undefined && type !== 'error') failure.type = type;
  return failure;
}

/** The text of a message item's `output_text` parts (refusals are not answer text, as in Chat Completions). */
function messageText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      isRecord(part) && part['type'] === 'output_text' && typeof part['text'] === 'string'
        ? part['text']
        : '',
    )
    .join('');
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
