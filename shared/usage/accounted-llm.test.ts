import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CompleteJsonRequest, LlmGateway } from '../llm/llm-gateway.js';
import { MemoryUsageLedger } from '../../test/support/memory-usage-ledger.js';
import { accountedLlm } from './accounted-llm.js';
import { UsageRecorder } from './usage-recorder.js';
import { withUsage } from './usage-scope.js';

const usage = { promptTokens: 100, completionTokens: 20, totalTokens: 120 };

/** A model that reports `usage` for every request; a JSON answer may take a corrective second ask. */
function fakeModel(jsonRequests = 1): LlmGateway {
  return {
    streamChat: () =>
      Promise.resolve({
        content: 'hi',
        reasoning: '',
        toolCalls: [],
        finishReason: 'stop',
        usage,
        model: 'm-1',
      }),
    completeJson: <T>(request: CompleteJsonRequest<T>) => {
      for (let i = 0; i < jsonRequests; i++) request.onUsage?.({ usage, model: 'm' });
      return jsonRequests > 2 ? Promise.reject(new Error('still invalid')) : Promise.resolve({} as T);
    },
    embed: (texts, options) => {
      options?.onUsage?.({
        usage: { promptTokens: texts.length, completionTokens: 0, totalTokens: texts.length },
      });
      return Promise.resolve(texts.map(() => [0]));
    },
    probe: () => Promise.resolve({ ok: true, detail: '' }),
  };
}

function setUp(jsonRequests = 1) {
  const ledger = new MemoryUsageLedger();
  const prices = { m: { input: 1, output: 10 }, e: { input: 0.1 } };
  const llm = accountedLlm(fakeModel(jsonRequests), new UsageRecorder(ledger, prices), {
    chat: 'm',
    embedding: 'e',
  });
  return { ledger, llm };
}

const job = { userId: 'user_001', sessionId: 's1', turnId: 't1', job: 'history' };
const json = (name: string, purpose?: 'title') => ({
  messages: [],
  schema: z.object({}),
  name,
  ...(purpose ? { purpose } : {}),
});

describe('the accounted gateway', () => {
  it('records each call of a job with its kind, model and cost, and logs one llm-usage line per call', async () => {
    const { ledger, llm } = setUp();
    const lines: string[] = [];
    await withUsage({ ...job, log: { log: (line: string) => lines.push(line) } }, async () => {
      await llm.streamChat({ messages: [] });
      await llm.completeJson(json('exchange_index', 'title'));
      await llm.completeJson(json('memory_profile_changes'));
      await llm.embed(['a', 'b']);
    });
    const calls = [...ledger.calls.values()];
    expect(calls.map((call) => [call.kind, call.model, call.costUsd])).toEqual([
      ['turn', 'm-1', 0.0003], // m-1 prices as m: a dated name takes its base name's price
      ['title', 'm', 0.0003],
      ['profile', 'm', 0.0003],
      ['embedding', 'e', 2e-7],
    ]);
    expect(calls[0]?.priced).toBe(true);
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[1]!.slice('llm-usage '.length))).toEqual({
      userId: 'user_001',
      sessionId: 's1',
      turnId: 't1',
      kind: 'title',
      model: 'm',
      inputTokens: 100,
      cachedInputTokens: 0,
      outputTokens: 20,
      reasoningTokens: 0,
      costUsd: 0.0003,
    });
  });

  it('counts a job run again once, and records nothing outside a job', async () => {
    const { ledger, llm } = setUp();
    const run = () => withUsage(job, () => llm.completeJson(json('conversation_summary')));
    await run();
    await run();
    await llm.completeJson(json('conversation_summary'));
    expect(ledger.calls.size).toBe(1);
    expect((await ledger.counter('user_001', 'conversation', 's1'))?.background.calls).toBe(1);
  });

  it('records the requests of an answer that stayed invalid: they were paid for', async () => {
    const { ledger, llm } = setUp(3);
    await expect(withUsage(job, () => llm.completeJson(json('session_summary')))).rejects.toThrow(
      'still invalid',
    );
    expect([...ledger.calls.values()].map((call) => call.kind)).toEqual(['summary', 'summary', 'summary']);
  });
});
