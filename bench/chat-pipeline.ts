// What the chat turn core costs, in one run against the local runtime and the offline model in child
// processes: added time to first token, coalescing, CPU and traffic per turn. Asserts nothing about speed.
// npm run bench
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import OpenAI from 'openai';
import {
  measureAzureLatency,
  printAzureLatency,
  type AzureLatencyBench,
  type AzureLatencyResults,
} from './azure-latency.js';
import { measureCoalescing } from './coalescing.js';
import { measureConcurrency, type ConcurrencyRow } from './concurrency.js';
import { measureTurnCost } from './conversation-cost.js';
import type { ModelReady } from './model-process.js';
import {
  BATCH_TIMEOUT_MS,
  check,
  EMBEDDING_DIMENSIONS,
  idle,
  integrity,
  integrityWhole,
  MODEL_TOKENS_PER_SECOND,
  MODEL_TTFT_MS,
  newUser,
  PLAN,
  progress,
  QUICK,
  realtimeClients,
  remoteModelSettings,
  reply,
  REPLY_WORDS,
  retire,
  startChild,
  startTarget,
  stopAll,
  stopChild,
} from './pipeline-harness.js';
import {
  printConcurrency,
  printReport,
  printTurnCost,
  writeResults,
  type Results,
} from './pipeline-report.js';
import { measureRepeatedBatches } from './repeated-batches.js';

/**
 * `turn-cost`: only (3), the cost of one turn along one long conversation; `azure-latency`: only the added time to
 * first token under the Azure latency model (npm run bench:azure-latency); `concurrency`: only (a)(c), the local
 * runtime at 1, 100 and 500 sessions beside the direct baseline (npm run bench:load).
 */
const ONLY = process.env.BENCH_ONLY;
const TURN_COST_RESULTS_FILE = QUICK ? 'bench/results/turn-cost-quick.json' : 'bench/results/turn-cost.json';

/** (3) on its own runtime, with the offline model at full speed: one long conversation. */
async function runTurnCost() {
  progress(`(3) one conversation of ${PLAN.turnCost.turns} turns with a fast model`);
  const fast = await startTarget('fast model', {
    OFFLINE_MODEL_TTFT_MS: '0',
    OFFLINE_MODEL_TOKENS_PER_SECOND: '0',
  });
  const turnCost = await measureTurnCost(fast);
  // The clients first: one whose runtime went away first keeps trying to reconnect, and the bench never exits.
  for (const client of realtimeClients.splice(0)) client.stop();
  await retire(fast);
  return turnCost;
}

/** Only (3) (npm run bench:turn-cost). */
async function mainTurnCost(): Promise<boolean> {
  const turnCost = await runTurnCost();
  printTurnCost(turnCost);
  await mkdir('bench/results', { recursive: true });
  await writeFile(
    TURN_COST_RESULTS_FILE,
    `${JSON.stringify({ quick: QUICK, turnCost, integrity }, null, 2)}\n`,
  );
  console.log(`\nResults written to ${TURN_COST_RESULTS_FILE}`);
  return integrityWhole();
}

/** The section under the Azure latency model, with a model process of its own whose first token is drawn. */
async function runAzureLatency(): Promise<AzureLatencyResults> {
  progress('(azure) the added time to first token under the Azure latency model');
  const model = await startChild<ModelReady>('./model-process.ts', 'model (Azure first token)', {
    ttftMs: 0,
    tokensPerSecond: MODEL_TOKENS_PER_SECOND,
    embeddingDimensions: EMBEDDING_DIMENSIONS,
    firstTokenSeed: 1,
  });
  const bench: AzureLatencyBench = {
    model,
    modelSettings: remoteModelSettings(model.ready),
    startTarget,
    retire,
    idle,
    newUser,
    check,
    replyText: reply,
    replyWords: REPLY_WORDS,
    timeoutMs: BATCH_TIMEOUT_MS,
    plan: PLAN.azureLatency,
  };
  try {
    return await measureAzureLatency(bench, progress);
  } finally {
    await stopChild(model);
  }
}

/** Only the Azure latency model's section (npm run bench:azure-latency). */
async function mainAzureLatency(): Promise<boolean> {
  const azureLatency = await runAzureLatency();
  printAzureLatency(azureLatency);
  const file = QUICK ? 'bench/results/azure-latency-quick.json' : 'bench/results/azure-latency.json';
  await mkdir('bench/results', { recursive: true });
  await writeFile(file, `${JSON.stringify({ quick: QUICK, azureLatency, integrity }, null, 2)}\n`);
  console.log(`\nResults written to ${file}`);
  return integrityWhole();
}

/** Only (a)(c): the local runtime at 1, 100 and 500 sessions beside the direct baseline (npm run bench:load). */
async function mainConcurrency(): Promise<boolean> {
  const modelProcess = await startChild<ModelReady>('./model-process.ts', 'model', {
    ttftMs: MODEL_TTFT_MS,
    tokensPerSecond: MODEL_TOKENS_PER_SECOND,
    embeddingDimensions: EMBEDDING_DIMENSIONS,
  });
  const model = new OpenAI({ baseURL: modelProcess.ready.baseUrl, apiKey: 'unused', maxRetries: 0 });
  const target = await startTarget('local runtime', remoteModelSettings(modelProcess.ready));
  const concurrency: ConcurrencyRow[] = [];
  for (const sessions of PLAN.concurrency) {
    progress(`(a)(c) ${sessions} session(s) at once`);
    concurrency.push(await measureConcurrency(target, model, sessions));
  }
  await retire(target);
  printConcurrency(concurrency);
  const file = QUICK ? 'bench/results/concurrency-quick.json' : 'bench/results/concurrency.json';
  await mkdir('bench/results', { recursive: true });
  await writeFile(file, `${JSON.stringify({ quick: QUICK, concurrency, integrity }, null, 2)}\n`);
  console.log(`\nResults written to ${file}`);
  return integrityWhole();
}

async function main(): Promise<boolean> {
  if (ONLY === 'turn-cost') return mainTurnCost();
  if (ONLY === 'azure-latency') return mainAzureLatency();
  if (ONLY === 'concurrency') return mainConcurrency();
  const azureLatency = await runAzureLatency();
  progress('starting the model and the runtimes');
  const modelProcess = await startChild<ModelReady>('./model-process.ts', 'model', {
    ttftMs: MODEL_TTFT_MS,
    tokensPerSecond: MODEL_TOKENS_PER_SECOND,
    embeddingDimensions: EMBEDDING_DIMENSIONS,
  });
  const model = new OpenAI({ baseURL: modelProcess.ready.baseUrl, apiKey: 'unused', maxRetries: 0 });
  const remote = remoteModelSettings(modelProcess.ready);
  const coalesced = await startTarget('coalescing', remote);
  const uncoalesced = await startTarget('no coalescing', { ...remote, STREAM_FLUSH_INTERVAL_MS: '0' });

  progress('(b) coalescing');
  const coalescing = await measureCoalescing(coalesced, uncoalesced);
  await retire(uncoalesced);

  const concurrency: ConcurrencyRow[] = [];
  for (const sessions of PLAN.concurrency) {
    progress(`(a)(c) ${sessions} session(s) at once`);
    concurrency.push(await measureConcurrency(coalesced, model, sessions));
  }
  await retire(coalesced);

  progress('(4) repeated batches on a fresh runtime');
  const repeatedTarget = await startTarget('repeated batches', remote);
  const repeatedBatches = await measureRepeatedBatches(repeatedTarget, model);
  await retire(repeatedTarget);

  const turnCost = await runTurnCost();

  const results: Results = {
    quick: QUICK,
    machine: {
      cpus: availableParallelism(),
      node: process.version,
      note:
        'Runtime, model and clients run in three processes on this machine (CPU figures are the runtime ' +
        "process's own); timings are noisy when other work shares the CPUs.",
    },
    model: {
      ttftMs: MODEL_TTFT_MS,
      tokensPerSecond: MODEL_TOKENS_PER_SECOND,
      where: 'its own process, called as an OpenAI-compatible endpoint',
    },
    azureLatency,
    concurrency,
    coalescing,
    turnCost,
    repeatedBatches,
    integrity,
  };
  printReport(results);
  await writeResults(results);
  return integrityWhole();
}
try {
  const whole = await main();
  await stopAll();
  if (!whole) {
    console.error('FAILED: tokens were lost or turns duplicated or failed (see the report above).');
    process.exitCode = 1;
  }
} catch (error) {
  console.error('FAILED:', error);
  await stopAll().catch(() => undefined);
  process.exit(1);
}
