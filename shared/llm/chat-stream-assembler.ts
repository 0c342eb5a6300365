// Pure assembly of streamed Chat Completions chunks into one step, tolerant of every provider quirk
// recorded in test/fixtures/llm-wire/README.md. No I/O: the gateway feeds it parsed chunks.
import type { LlmDelta, LlmReply, LlmUsage, ToolCall } from './llm-gateway.js';
import { isRecord, nonEmptyString, readUsage, type UsageFields } from './wire-reading.js';

/** Chat Completions' usage fields; some servers put reasoning tokens at the top level. */
export const USAGE_FIELDS: UsageFields = {
  input: 'prompt_tokens',
  output: 'completion_tokens',
  inputDetails: 'prompt_tokens_details',
  outputDetails: 'completion_tokens_details',
  reasoningFallback: 'reasoning_tokens',
};

interface ToolCallSlot {
  index: number;
  id: string;
  name: string;
  arguments: string;
  announced: boolean;
}

/**
 * How it reads the stream, each rule tied to a quirk number of test/fixtures/llm-wire/README.md:
 * - chunks without choices (Azure's filter event, the usage chunk) are read for usage and model only (1, 2);
 * - `null` anywhere means absent (`usage:null`, `delta.content:null`, every DeepSeek delta key) (3, 6);
 * - unknown keys are ignored, nothing is validated strictly, `obfuscation` is never read (4, 5, 12);
 * - tool calls are keyed by `index`, never by id; id/name are taken from the first fragment that has them and
 *   argument fragments are concatenated as they come; arguments are parsed by no one here (7, 8, 9);
 * - reasoning arrives in `reasoning_content` or, on some servers (vLLM, newer Ollama), in `reasoning` (10);
 * - finish_reason may come with a last empty content delta, and reading goes on after it for usage (2, 11);
 * - deltas are never trimmed; empty strings are simply not reported (13).
 */
export class ChatStreamAssembler {
  #content = '';
  #reasoning = '';
  readonly #slots = new Map<number, ToolCallSlot>();
  #lastSlotIndex: number | undefined;
  #finishReason: string | undefined;
  #usage: LlmUsage | undefined;
  #model: string | undefined;

  /** Whether a finish_reason arrived; a stream that ends without one was cut off. */
  get finished(): boolean {
    return this.#finishReason !== undefined;
  }

  /** Takes one parsed chunk and returns the deltas it adds, in order. */
  push(chunk: unknown): LlmDelta[] {
    if (!isRecord(chunk)) return [];
    const deltas: LlmDelta[] = [];
    const model = chunk['model'];
    if (this.#model === undefined && typeof model === 'string' && model !== '') this.#model = model;
    const usage = readUsage(chunk['usage'], USAGE_FIELDS);
    if (usage) this.#usage = usage;

    const choices = chunk['choices'];
    if (!Array.isArray(choices)) return deltas;
    for (const choice of choices) {
      if (!isRecord(choice)) continue;
      // n is always 1 here; other choices would interleave with ours.
      const index = choice['index'];
      if (typeof index === 'number' && index !== 0) continue;
      const delta = choice['delta'];
      if (isRecord(delta)) this.#readDelta(delta, deltas);
      const finishReason = choice['finish_reason'];
      if (typeof finishReason === 'string' && finishReason !== '') this.#finishReason = finishReason;
    }
    return deltas;
  }

  /** The assembled step; `finishReason` overrides the provider's (used for `cancelled`). */
  result(finishReason?: string): LlmReply {
    const toolCalls: ToolCall[] = [...this.#slots.values()]
      .sort((a, b) => a.index - b.index)
      .filter((slot) => slot.name !== '')
      .map((slot) => ({
        id: slot.id === '' ? syntheticToolCallId(slot.index) : slot.id,
        name: slot.name,
        // A call without arguments is sent as "" by some servers; "{}" is what a tool executor can parse.
        arguments: slot.arguments === '' ? '{}' : slot.arguments,
      }));
    const result: LlmReply = {
      content: this.#content,
      reasoning: this.#reasoning,
      toolCalls,
      finishReason: finishReason ?? this.#finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'unknown'),
    };
    if (this.#usage) result.usage = this.#usage;
    if (this.#model !== undefined) result.model = this.#model;
    return result;
  }

  #readDelta(delta: Record<string, unknown>, deltas: LlmDelta[]): void {
    // vLLM has sent the same text under both names during its rename; take one, never both.
    const reasoning = nonEmptyString(delta['reasoning_content']) ?? nonEmptyString(delta['reasoning']);
    if (reasoning !== undefined) {
      this.#reasoning += reasoning;
      deltas.push({ type: 'reasoning', text: reasoning });
    }
    const content = nonEmptyString(delta['content']);
    if (content !== undefined) {
      this.#content += content;
      deltas.push({ type: 'content', text: content });
    }
    const toolCalls = delta['tool_calls'];
    if (Array.isArray(toolCalls)) {
      for (const fragment of toolCalls) {
        if (isRecord(fragment)) this.#readToolCallFragment(fragment, deltas);
      }
    }
  }

  #readToolCallFragment(fragment: Record<string, unknown>, deltas: LlmDelta[]): void {
    const slot = this.#slotFor(fragment);
    const id = nonEmptyString(fragment['id']);
    if (id !== undefined && slot.id === '') slot.id = id;
    const fn = fragment['function'];
    if (isRecord(fn)) {
      const name = nonEmptyString(fn['name']);
      if (name !== undefined && slot.name === '') slot.name = name;
      const args = fn['arguments'];
      if (typeof args === 'string') slot.arguments += args;
      // A few proxies send the arguments as an object rather than JSON text.
      else if (isRecord(args)) slot.arguments += JSON.stringify(args);
    }
    if (!slot.announced && slot.name !== '') {
      slot.announced = true;
      if (slot.id === '') slot.id = syntheticToolCallId(slot.index);
      deltas.push({ type: 'tool-call', index: slot.index, id: slot.id, name: slot.name });
    }
  }

  #slotFor(fragment: Record<string, unknown>): ToolCallSlot {
    const index = fragment['index'];
    // Servers that omit `index` (out of contract) start a call with an id and continue it without one.
    const key =
      typeof index === 'number'
        ? index
        : nonEmptyString(fragment['id']) !== undefined || this.#lastSlotIndex === undefined
          ? this.#slots.size
          : this.#lastSlotIndex;
    let slot = this.#slots.get(key);
    if (!slot) {
      slot = { index: key, id: '', name: '', arguments: '', announced: false };
      this.#slots.set(key, slot);
    }
    this.#lastSlotIndex = key;
    return slot;
  }
}

/** Deterministic id for servers that send none, so tool results can still be matched to their call. */
function syntheticToolCallId(index: number): string {
  return `call_${index}`;
}
