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
  it("records a job's calls once, by kind and model with their cost, and logs one llm-usage line for each", async () => {
    const { ledger, llm } = setUp();
    const lines: string[] = [];
    await withUsage({ ...job, log: { log: (line: string) => lines.push(line) } }, async () => {
      await llm.streamChat({ messages: [] });
      await llm.completeJson(json('exchange_index', 'title'));
      await llm.completeJson(json('memory_profile_changes'));
      await llm.embed(['a', 'b']);
    });
    const records = [...ledger.calls.values()];
    expect(records).toHaveLength(1);
    const parts = records[0]!.jobs.history ?? [];
    expect(parts.map((part) => [part.kind, part.model, part.calls, part.costUsd])).toEqual([
      ['turn', 'm-1', 1, 0.0003], // m-1 prices as m: a dated name takes its base name's price
      ['title', 'm', 1, 0.0003],
      ['profile', 'm', 1, 0.0003],
      ['embedding', 'e', 1, 2e-7],
    ]);
    expect(parts[0]?.priced).toBe(true);
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[1]!.slice('llm-usage '.length))).toEqual({
      userId: 'user_001',
      sessionId: 's1',
      turnId: 't1',
      kind: 'title',
      model: 'm',
      calls: 1,
      inputTokens: 100,
      cachedInputTokens: 0,
      outputTokens: 20,
      reasoningTokens: 0,
      costUsd: 0.0003,
    });
  });

  it('counts a job run again once, saying so in its log, and records nothing outside a job', async () => {
    const { ledger, llm } = setUp();
    const lines: string[] = [];
    const log = { log: (line: string) => lines.push(line) };
    const run = () => withUsage({ ...job, log }, () => llm.completeJson(json('conversation_summary')));
    await run();
    await run();
    await llm.completeJson(json('conversation_summary'));
    expect(ledger.calls.size).toBe(1);
    expect((await ledger.counter('user_001', 'conversation', 's1'))?.background.calls).toBe(1);
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['llm-usage', 'llm-usage-repeat']);
    expect(lines[1]).toContain('"job":"history"');
  });

  it("folds the jobs of a turn into its one record, once each, and keeps a background job's apart", async () => {
    const { ledger, llm } = setUp();
    const turn = { userId: 'user_001', sessionId: 's1', turnId: 't1' };
    await withUsage({ ...turn, job: 'round:0' }, () => llm.streamChat({ messages: [] }));
    await withUsage({ ...turn, job: 'tool:0:0' }, () => llm.embed(['a']));
    await withUsage({ ...turn, job: 'round:1' }, () => llm.streamChat({ messages: [] }));
    // The last round run again (its activity retried): its calls are in the record already.
    await withUsage({ ...turn, job: 'round:1' }, () => llm.streamChat({ messages: [] }));
    await withUsage({ ...turn, job: 'memory', ownRecord: true }, async () => {
      await llm.completeJson(json('conversation_summary'));
      await llm.embed(['b']);
    });
    const records = [...ledger.calls.values()];
    expect(records.map((record) => Object.keys(record.jobs))).toEqual([
      ['round:0', 'tool:0:0', 'round:1'],
      ['memory'],
    ]);
    expect(records[0]?.id).not.toBe(records[1]?.id);
    const counter = await ledger.counter('user_001', 'conversation', 's1');
    expect(counter?.turns.calls).toBe(2);
    expect(counter?.background.calls).toBe(3);
  });

  it('records the requests of an answer that stayed invalid: they were paid for', async () => {
    const { ledger, llm } = setUp(3);
    await expect(withUsage(job, () => llm.completeJson(json('session_summary')))).rejects.toThrow(
      'still invalid',
    );
    const parts = [...ledger.calls.values()].flatMap((record) => record.jobs.history ?? []);
    expect(parts.map((part) => [part.kind, part.calls])).toEqual([['summary', 3]]);
  });

  it("writes a turn's handed calls with the worker's own in one record, and counts each job once", async () => {
    const { ledger, llm } = setUp();
    const recorder = new UsageRecorder(ledger, { m: { input: 1, output: 10 } });
    const carried = { job: 'round:0', calls: [{ kind: 'turn', model: 'm', usage }] };
    const lines: string[] = [];
    const log = { log: (line: string) => lines.push(line) };
    const history = (calls: boolean) =>
      withUsage(
        { ...job, carried, log },
        async () => {
          if (calls) await llm.completeJson(json('exchange_index'));
        },
        recorder,
      );
    // A worker that makes no call of its own still writes the calls handed to it.
    await history(false);
    expect(Object.keys([...ledger.calls.values()][0]!.jobs)).toEqual(['round:0']);
    const month = () => ledger.counter('user_001', 'month', new Date().toISOString().slice(0, 7));
    expect((await month())?.turns.calls).toBe(1);
    // Delivered again with a call of its own: the round is in the record already, the worker's job is counted alone.
    await history(true);
    expect(Object.keys([...ledger.calls.values()][0]!.jobs).sort()).toEqual(['history', 'round:0']);
    expect((await month())?.turns.calls).toBe(1);
    expect((await month())?.background.calls).toBe(1);
    expect(lines.filter((line) => line.startsWith('llm-usage-repeat '))).toHaveLength(1);
    // And again: nothing more.
    await history(true);
    expect((await month())?.background.calls).toBe(1);
    expect((await month())?.turns.calls).toBe(1);
  });
});
