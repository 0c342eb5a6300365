// (a)(c) of the chat pipeline bench: the time the pipeline adds to the model's first token with 1, 100 and 500
// sessions at once, beside the direct baseline and the model alone at the same concurrency.
import type OpenAI from 'openai';
import { mean, percentile, percentiles, ratio, round, sumOf, type Percentiles } from './figures.js';
import { PLAN, reply, REPLY_WORDS, type Target } from './pipeline-harness.js';
import {
  batchOptions,
  modelTtft,
  runBatch,
  type BatchIntegrity,
  type BatchSamples,
} from './session-batch.js';

export interface ConcurrencyRow extends BatchIntegrity {
  sessions: number;
  batches: number;
  modelAloneMs: Percentiles;
  /** The model's own TTFT with N calls at once, straight from the bench (no function in between). */
  modelAtConcurrencyMs: Percentiles | undefined;
  addedMs: { sse: Percentiles; webSocket: Percentiles | undefined; direct: Percentiles };
  /** Architecture's added TTFT ÷ the direct baseline's, at p50 and p99 (null when the baseline adds ~0). */
  addedRatioOverDirect: { sseP50: number | null; sseP99: number | null; webSocketP50: number | null };
  postToMessageStartMs: Percentiles;
  cpuMsPerTurn: { pipeline: number; direct: number | undefined };
  runtimeEventLoopUtilisation: number;
}

async function modelAtConcurrency(model: OpenAI, n: number): Promise<Percentiles> {
  return percentiles(
    await Promise.all(Array.from({ length: n }, () => modelTtft(model, reply(REPLY_WORDS)))),
  );
}

export async function measureConcurrency(
  target: Target,
  model: OpenAI,
  sessions: number,
): Promise<ConcurrencyRow> {
  const repeats = sessions === 1 ? PLAN.singleSessionRepeats : 1;
  // One warm-up turn each way, so the first sample is not the JIT's.
  if (sessions === 1) await runBatch(target, model, batchOptions('warmup', 1, true));
  const batches: BatchSamples[] = [];
  for (let r = 0; r < repeats; r += 1) {
    batches.push(await runBatch(target, model, { ...batchOptions(`c${sessions}`, sessions, r % 2 === 0) }));
  }
  const modelAlone = batches.flatMap((b) => b.modelAloneMs);
  const atRest = percentile(modelAlone, 50);
  const added = (values: number[]) => percentiles(values.map((v) => v - atRest));
  const sse = added(batches.flatMap((b) => b.sseMs));
  const wsValues = batches.flatMap((b) => b.webSocketMs);
  const webSocket = wsValues.length > 0 ? added(wsValues) : undefined;
  const direct = added(batches.flatMap((b) => b.directMs));
  return {
    sessions,
    batches: repeats,
    modelAloneMs: percentiles(modelAlone),
    modelAtConcurrencyMs: sessions > 1 ? await modelAtConcurrency(model, sessions) : undefined,
    addedMs: { sse, webSocket, direct },
    addedRatioOverDirect: {
      sseP50: ratio(sse.p50, direct.p50),
      sseP99: ratio(sse.p99, direct.p99),
      webSocketP50: webSocket ? ratio(webSocket.p50, direct.p50) : null,
    },
    postToMessageStartMs: percentiles(batches.flatMap((b) => b.postToMessageStartMs)),
    cpuMsPerTurn: {
      pipeline: round(mean(batches.map((b) => b.cpuMsPerTurn)), 2),
      direct: round(mean(batches.map((b) => b.directCpuMsPerTurn ?? Number.NaN)), 2),
    },
    runtimeEventLoopUtilisation: round(mean(batches.map((b) => b.eventLoopUtilisation)), 3),
    peakTurnsStreaming: Math.max(...batches.map((b) => b.peakTurnsStreaming)),
    wallMs: round(mean(batches.map((b) => b.wallMs)), 0),
    tokensLost: sumOf(batches, (b) => b.tokensLost),
    turnsDuplicated: sumOf(batches, (b) => b.turnsDuplicated),
    turnsIncomplete: sumOf(batches, (b) => b.turnsIncomplete),
    assistantRepliesMissing: sumOf(batches, (b) => b.assistantRepliesMissing),
    errors: batches.flatMap((b) => b.errors),
    sseReconnects: sumOf(batches, (b) => b.sseReconnects),
  };
}
