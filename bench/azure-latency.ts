// The bench's first section: the time the pipeline adds to the model's first token with every local service
// answering as late as Azure (LOCAL_AZURE_LATENCY=azure), beside the direct baseline under the same model, for
// each first-round path and task-hub backend. Each turn's own model.first-token draw is taken off its time.
import { randomUUID } from 'node:crypto';
import { mapBounded } from '../shared/bounded-parallel.js';
import type { BenchChild } from './child-process.js';
import type { ChatApi } from './chat-clients.js';
import { SessionEvents, TurnTrace } from './chat-clients.js';
import { percentiles, type Percentiles } from './figures.js';
import { benchRef, type ModelReady } from './model-process.js';
import type { RuntimeReady } from './runtime-process.js';

/** The issue's targets for the added time to first token under the model (reported, never asserted). */
export const AZURE_TARGETS = { p50Ms: 150, p99Ms: 400 };

export const FIRST_ROUNDS = ['worker', 'orchestration'] as const;
export const TASK_HUBS = ['azure-storage', 'durable-task-scheduler'] as const;

interface Target {
  name: string;
  runtime: BenchChild<RuntimeReady>;
  api: ChatApi;
}

/** What the section borrows from the bench around it. */
export interface AzureLatencyBench {
  model: BenchChild<ModelReady>;
  /** The app's settings for a runtime that calls `model`. */
  modelSettings: Record<string, string>;
  startTarget(name: string, settings: Record<string, string>): Promise<Target>;
  retire(target: Target): Promise<void>;
  idle(target: Target): Promise<void>;
  newUser(label: string): string;
  /** Counts a stream's losses and duplicates in the run's integrity; returns whether it was whole. */
  check(trace: TurnTrace, expectedWords: number): boolean;
  replyText(words: number): string;
  replyWords: number;
  timeoutMs: number;
  /** Sessions at once for the single-session rows (one) and the loaded ones, and how often the single one runs. */
  plan: { singleRepeats: number; sessions: number };
}

export interface AzureLatencyFigures {
  /** Added TTFT (POST → first content − the turn's own model first-token draw). */
  sse: Percentiles;
  webSocket: Percentiles;
  direct: Percentiles;
  turns: number;
  incomplete: number;
}

export interface AzureLatencyRow {
  firstRound: (typeof FIRST_ROUNDS)[number];
  taskHub: (typeof TASK_HUBS)[number];
  single: AzureLatencyFigures;
  loaded: AzureLatencyFigures;
}

export interface AzureLatencyResults {
  seed: number;
  sessions: number;
  singleRepeats: number;
  targets: typeof AZURE_TARGETS;
  rows: AzureLatencyRow[];
}

interface Samples {
  sse: number[];
  webSocket: number[];
  direct: number[];
  incomplete: number;
}

const SEED = 1;

export async function measureAzureLatency(
  bench: AzureLatencyBench,
  progress: (step: string) => void,
): Promise<AzureLatencyResults> {
  const rows: AzureLatencyRow[] = [];
  for (const firstRound of FIRST_ROUNDS) {
    for (const taskHub of TASK_HUBS) {
      progress(`(azure) CHAT_FIRST_ROUND=${firstRound}, LOCAL_AZURE_TASK_HUB=${taskHub}`);
      const target = await bench.startTarget(`azure ${firstRound} ${taskHub}`, {
        ...bench.modelSettings,
        LOCAL_AZURE_LATENCY: 'azure',
        LOCAL_AZURE_LATENCY_SEED: String(SEED),
        LOCAL_AZURE_TASK_HUB: taskHub,
        CHAT_FIRST_ROUND: firstRound,
      });
      try {
        // A warm-up turn, so the first sample is not the JIT's nor the SDKs' first connection.
        await runBatch(bench, target, 1, true);
        const single: Samples[] = [];
        for (let r = 0; r < bench.plan.singleRepeats; r += 1)
          single.push(await runBatch(bench, target, 1, r % 2 === 0));
        const loaded = await runBatch(bench, target, bench.plan.sessions, false);
        rows.push({ firstRound, taskHub, single: figures(single), loaded: figures([loaded]) });
      } finally {
        await bench.retire(target);
      }
    }
  }
  return {
    seed: SEED,
    sessions: bench.plan.sessions,
    singleRepeats: bench.plan.singleRepeats,
    targets: AZURE_TARGETS,
    rows,
  };
}

function figures(batches: readonly Samples[]): AzureLatencyFigures {
  const all = (pick: (s: Samples) => number[]) => batches.flatMap(pick);
  return {
    sse: percentiles(all((s) => s.sse)),
    webSocket: percentiles(all((s) => s.webSocket)),
    direct: percentiles(all((s) => s.direct)),
    turns: all((s) => s.sse).length,
    incomplete: batches.reduce((sum, s) => sum + s.incomplete, 0),
  };
}

interface Turn {
  userId: string;
  sessionId: string;
  chatMessageId: string;
  events: SessionEvents;
  sse: TurnTrace;
  ws: TurnTrace;
  sentAt: number;
}

/** N sessions posting one message at once, read over SSE and Web PubSub, and N direct calls before or after. */
async function runBatch(
  bench: AzureLatencyBench,
  target: Target,
  n: number,
  directFirst: boolean,
): Promise<Samples> {
  const turns = await mapBounded(Array.from({ length: n }), 25, async (): Promise<Turn> => {
    const userId = bench.newUser('azure');
    const sessionId = await target.api.startSession(userId);
    const chatMessageId = randomUUID();
    const events = await SessionEvents.connect(target.api, userId, sessionId);
    return {
      userId,
      sessionId,
      chatMessageId,
      events,
      sse: new TurnTrace(),
      ws: events.trace(chatMessageId),
      sentAt: 0,
    };
  });
  await bench.idle(target);
  let direct: number[] = [];
  if (directFirst) direct = await runDirect(bench, target, n);
  let incomplete = 0;
  try {
    await Promise.all(
      turns.map(async (turn) => {
        const text = `${bench.replyText(bench.replyWords)} ${benchRef(turn.chatMessageId)}`;
        turn.sentAt = performance.now();
        const streamUrl = await target.api.postChat(turn.userId, turn.sessionId, turn.chatMessageId, text);
        await target.api
          .readStream(turn.userId, streamUrl, turn.sse)
          .catch((error: unknown) => turn.sse.errors.push(`SSE client: ${String(error)}`));
        await turn.ws
          .finished(bench.timeoutMs, 'Web PubSub turn')
          .catch((error: unknown) => turn.ws.errors.push(`Web PubSub client: ${String(error)}`));
      }),
    );
  } finally {
    for (const turn of turns) turn.events.stop();
  }
  for (const turn of turns)
    for (const trace of [turn.sse, turn.ws]) if (!bench.check(trace, bench.replyWords)) incomplete += 1;
  await bench.idle(target);
  if (!directFirst) direct = await runDirect(bench, target, n);
  const draws = await bench.model.call<(number | null)[]>(
    'firstTokenDraws',
    turns.map((turn) => turn.chatMessageId),
  );
  const added = (turn: Turn, trace: TurnTrace, index: number) => {
    const draw = draws[index];
    return trace.firstContentAt === undefined || draw == null
      ? Number.NaN
      : trace.firstContentAt - turn.sentAt - draw;
  };
  return {
    sse: turns.map((turn, index) => added(turn, turn.sse, index)),
    webSocket: turns.map((turn, index) => added(turn, turn.ws, index)),
    direct,
    incomplete,
  };
}

/** The direct baseline: N calls at once of the one HTTP function that streams the same model. */
async function runDirect(bench: AzureLatencyBench, target: Target, n: number): Promise<number[]> {
  const calls = Array.from({ length: n }, () => ({ ref: randomUUID(), trace: new TurnTrace(), sentAt: 0 }));
  await Promise.all(
    calls.map(async (call) => {
      call.sentAt = performance.now();
      await target.api.directChat(
        bench.newUser('azure-direct'),
        target.runtime.ready.directChatPath,
        `${bench.replyText(bench.replyWords)} ${benchRef(call.ref)}`,
        call.trace,
      );
      if (call.trace.errors.length > 0 || call.trace.wordArrivals.length !== bench.replyWords)
        throw new Error(`the direct baseline streamed a broken reply: ${call.trace.errors.join('; ')}`);
    }),
  );
  const draws = await bench.model.call<(number | null)[]>(
    'firstTokenDraws',
    calls.map((call) => call.ref),
  );
  return calls.map((call, index) => {
    const draw = draws[index];
    return call.trace.firstContentAt === undefined || draw == null
      ? Number.NaN
      : call.trace.firstContentAt - call.sentAt - draw;
  });
}

export function printAzureLatency(results: AzureLatencyResults): void {
  const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(0)} ms` : '—');
  const { p50Ms, p99Ms } = results.targets;
  const mark = (p: Percentiles) =>
    `p50 ${ms(p.p50)} ${p.p50 <= p50Ms ? '≤' : '>'} ${p50Ms}, p99 ${ms(p.p99)} ${p.p99 <= p99Ms ? '≤' : '>'} ${p99Ms}`;
  const line = (label: string, value: string) => console.log(`    ${label.padEnd(44)} ${value}`);
  console.log(
    '\n(azure) Added time to first token under the Azure latency model (LOCAL_AZURE_LATENCY=azure, seed ' +
      `${results.seed}): POST → first content − the turn's own model.first-token draw; ` +
      `targets p50 ≤ ${p50Ms} ms, p99 ≤ ${p99Ms} ms (reported, not asserted)`,
  );
  for (const row of results.rows) {
    console.log(`  CHAT_FIRST_ROUND=${row.firstRound}, LOCAL_AZURE_TASK_HUB=${row.taskHub}`);
    for (const [label, f] of [
      [`1 session (${results.singleRepeats} turns, one after another)`, row.single],
      [`${results.sessions} sessions at once`, row.loaded],
    ] as const) {
      console.log(`   ${label}${f.incomplete > 0 ? `: ${f.incomplete} streams incomplete` : ''}`);
      line('added: direct baseline (same model)', `p50 ${ms(f.direct.p50)}, p99 ${ms(f.direct.p99)}`);
      line('added: pipeline, SSE client', mark(f.sse));
      line('added: pipeline, Web PubSub client', mark(f.webSocket));
    }
  }
}
