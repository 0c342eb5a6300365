// Replays the recorded Responses API streams cut at random byte offsets, through an independent SSE parser into
// the ResponsesStreamAssembler and through the real openai client and the gateway with LLM_API=responses: both
// must give exactly the sidecar's text, reasoning, tool calls, ids, usage and status or error.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import {
  cutsInsideDataPrefix,
  cutsInsideUtf8,
  everyOffset,
  LLM_WIRE_DIR,
  randomCuts,
  scriptedFetch,
  splitAt,
} from '../../../test/support/llm-wire-replay.js';
import { LlmError, type LlmConnection, type LlmDelta, type LlmReply, type LlmUsage } from '../llm-gateway.js';
import { ResponsesStreamAssembler } from '../responses-stream-assembler.js';
import { createLlmGateway } from './openai-gateway.js';

interface ResponsesSidecar {
  expected_text: string;
  expected_reasoning: string;
  expected_reasoning_parts: string[];
  expected_tool_calls: { name: string; arguments: string }[];
  expected_tool_call_ids: string[];
  expected_tool_item_ids: string[];
  expected_status: 'completed' | 'incomplete' | 'failed';
  expected_usage: {
    input_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens: number;
    output_tokens_details: { reasoning_tokens: number };
    total_tokens: number;
  } | null;
  expected_error?: {
    error_event: { type: string; code: string; message: string; param: string | null };
    response_error: { code: string; message: string };
  };
  event_types: Record<string, number>;
}

const fixtures = readdirSync(LLM_WIRE_DIR)
  .filter((file) => file.endsWith('.sse') && file.includes('-responses-'))
  .map((file) => file.slice(0, -'.sse'.length));

const ASSEMBLER_SEEDS = Array.from({ length: 24 }, (_, i) => 1 + i * 7919);
const GATEWAY_SEEDS = [1, 7, 42, 1337, 20260624];

function expectedUsage(raw: ResponsesSidecar['expected_usage']): LlmUsage | undefined {
  if (raw === null) return undefined;
  return {
    promptTokens: raw.input_tokens,
    completionTokens: raw.output_tokens,
    totalTokens: raw.total_tokens,
    reasoningTokens: raw.output_tokens_details.reasoning_tokens,
    cachedPromptTokens: raw.input_tokens_details.cached_tokens,
  };
}

/** The events of a byte stream as an SSE parser independent of the openai SDK reads them. */
function parseEvents(chunks: readonly Uint8Array[]): unknown[] {
  const events: unknown[] = [];
  const parser = createParser({ onEvent: (event) => events.push(JSON.parse(event.data)) });
  const decoder = new TextDecoder();
  for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
  parser.feed(decoder.decode());
  return events;
}

/** Checks the deltas tell the same story as the reply: text, reasoning split into parts by `reasoning-end`, calls. */
function expectDeltasAgree(deltas: readonly LlmDelta[], reply: LlmReply): void {
  const text = (type: 'content' | 'reasoning') =>
    deltas.flatMap((delta) => (delta.type === type ? [delta.text] : [])).join('');
  expect(text('content')).toBe(reply.content);
  expect(text('reasoning')).toBe(reply.reasoning);
  const parts: string[] = [];
  let open = '';
  for (const delta of deltas) {
    if (delta.type === 'reasoning') open += delta.text;
    if (delta.type === 'reasoning-end') {
      parts.push(open);
      open = '';
    }
  }
  expect(open).toBe('');
  expect(parts).toEqual(reply.reasoningParts ?? []);
  expect(deltas.flatMap((d) => (d.type === 'tool-call' ? [[d.index, d.id, d.name]] : []))).toEqual(
    reply.toolCalls.map((call, index) => [index, call.id, call.name]),
  );
}

const connection: LlmConnection = {
  kind: 'openai-compatible',
  baseUrl: 'http://llm.test/v1',
  chatModel: 'chat-model',
  embeddingModel: 'embedding-model',
  api: 'responses',
};

describe('replay of recorded Responses API streams', () => {
  it('covers the five recorded Responses streams', () => {
    expect(fixtures).toHaveLength(5);
  });

  for (const name of fixtures) {
    describe(name, () => {
      const bytes = new Uint8Array(readFileSync(join(LLM_WIRE_DIR, `${name}.sse`)));
      const sidecar = JSON.parse(
        readFileSync(join(LLM_WIRE_DIR, `${name}.json`), 'utf8'),
      ) as ResponsesSidecar;
      const failed = sidecar.expected_status === 'failed';

      it('the random splits cut inside `data: ` and, where the stream has any, inside UTF-8 characters', () => {
        const splits = ASSEMBLER_SEEDS.map((seed) => randomCuts(bytes.length, seed, 24));
        expect(splits.reduce((n, cuts) => n + cutsInsideDataPrefix(bytes, cuts), 0)).toBeGreaterThan(0);
        if (bytes.some((byte) => byte >= 0x80))
          expect(splits.reduce((n, cuts) => n + cutsInsideUtf8(bytes, cuts), 0)).toBeGreaterThan(0);
      });

      it(`the assembler gives the sidecar's values, however the bytes are cut (${ASSEMBLER_SEEDS.length + 2} splits)`, () => {
        const splits = [
          [],
          everyOffset(bytes.length),
          ...ASSEMBLER_SEEDS.map((s) => randomCuts(bytes.length, s, 24)),
        ];
        for (const cuts of splits) {
          const events = parseEvents(splitAt(bytes, cuts));
          const types = events.map((event) => (event as { type: string }).type);
          expect(
            Object.fromEntries(
              Object.keys(sidecar.event_types).map((t) => [t, types.filter((x) => x === t).length]),
            ),
          ).toEqual(sidecar.event_types);

          const assembler = new ResponsesStreamAssembler();
          const deltas = events.flatMap((event) => assembler.push(event));
          const reply = assembler.result();

          expect(assembler.finished).toBe(true);
          expect(assembler.status).toBe(sidecar.expected_status);
          expect(reply.content).toBe(sidecar.expected_text);
          expect(reply.reasoning).toBe(sidecar.expected_reasoning);
          expect(reply.reasoningParts ?? []).toEqual(sidecar.expected_reasoning_parts);
          expect(reply.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual(
            sidecar.expected_tool_calls,
          );
          expect(reply.toolCalls.map((call) => call.id)).toEqual(sidecar.expected_tool_call_ids);
          expect(assembler.toolCallItemIds).toEqual(sidecar.expected_tool_item_ids);
          expect(reply.usage).toEqual(expectedUsage(sidecar.expected_usage));
          expect(reply.model).toMatch(/^gpt-5/);
          expectDeltasAgree(deltas, reply);
          if (failed) {
            // The error event's words, kept while reading on to response.failed, whose code agrees.
            const expected = sidecar.expected_error!;
            expect(assembler.failure).toEqual({
              code: expected.error_event.code,
              message: expected.error_event.message,
              type: expected.error_event.type,
            });
            expect(assembler.failure?.code).toBe(expected.response_error.code);
          } else {
            expect(assembler.failure).toBeUndefined();
            expect(reply.finishReason).toBe(reply.toolCalls.length > 0 ? 'tool_calls' : 'stop');
          }
        }
      });

      const gatewaySplits: { label: string; cuts: number[] }[] = [
        { label: 'one piece', cuts: [] },
        ...GATEWAY_SEEDS.map((seed) => ({ label: `seed ${seed}`, cuts: randomCuts(bytes.length, seed, 24) })),
        { label: '1-byte chunks', cuts: everyOffset(bytes.length) },
      ];
      for (const split of gatewaySplits) {
        it(`the gateway gives the same through the real openai client (${split.label})`, async () => {
          const { fetch, requests } = scriptedFetch([
            { headers: { 'content-type': 'text/event-stream' }, chunks: splitAt(bytes, split.cuts) },
          ]);
          const gateway = createLlmGateway(connection, { maxRetries: 2, timeoutMs: 5_000, fetch });
          const deltas: LlmDelta[] = [];
          const streamed = gateway.streamChat({ messages: [{ role: 'user', content: 'hi' }] }, (delta) =>
            deltas.push(delta),
          );

          if (failed) {
            const error = (await streamed.catch((e: unknown) => e)) as LlmError;
            expect(error).toBeInstanceOf(LlmError);
            expect(error.providerCode).toBe(sidecar.expected_error!.response_error.code);
            expect(error.message).toContain(sidecar.expected_error!.response_error.message);
            // A quota runs out for longer than any retry waits.
            expect(error.retryable).toBe(false);
            expect(error.providerStatus).toBeUndefined();
            expect(requests).toHaveLength(1);
            return;
          }
          const reply = await streamed;
          expect(reply.content).toBe(sidecar.expected_text);
          expect(reply.reasoning).toBe(sidecar.expected_reasoning);
          expect(reply.reasoningParts ?? []).toEqual(sidecar.expected_reasoning_parts);
          expect(reply.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual(
            sidecar.expected_tool_calls,
          );
          expect(reply.toolCalls.map((call) => call.id)).toEqual(sidecar.expected_tool_call_ids);
          expect(reply.finishReason).toBe(reply.toolCalls.length > 0 ? 'tool_calls' : 'stop');
          expect(reply.usage).toEqual(expectedUsage(sidecar.expected_usage));
          expect(reply.model).toMatch(/^gpt-5/);
          expectDeltasAgree(deltas, reply);

          expect(requests[0]?.url).toBe('http://llm.test/v1/responses');
          expect(requests[0]?.body).toMatchObject({ model: 'chat-model', stream: true, store: false });
        });
      }
    });
  }
});
