// What the chat turn core costs, in one run against the local runtime and the offline model in child
// processes: added time to first token, coalescing, CPU and traffic per turn. Asserts nothing about speed.
// npm run bench
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import OpenAI from 'openai';
import { format, resolveConfig } from 'prettier';
import { OFFLINE_CHAT_MODEL, OFFLINE_EMBEDDING_MODEL } from '../local/offline-model/offline-model.js';
import { mapBounded } from '../shared/bounded-parallel.js';
import { BASIC_SYSTEM_PROMPT } from '../shared/chat/prompt.js';
import {
  measureAzureLatency,
  printAzureLatency,
  type AzureLatencyBench,
  type AzureLatencyResults,
} from './azure-latency.js';
import { BenchChild } from './child-process.js';
import { ChatApi, SessionEvents, TurnGauge, TurnTrace } from './chat-clients.js';
import {
  cpuMsPer,
  mean,
  percentile,
  percentiles,
  ratio,
  round,
  sumOf,
  utilisation,
  type Percentiles,
} from './figures.js';
import type { ModelReady } from './model-process.js';
import type { RuntimeReady, RuntimeUsage } from './runtime-process.js';
import {
  meanPrice,
  printTurnPrices,
  readTaskHubPolling,
  turnBill,
  turnPrice,
  type TurnPrice,
} from './turn-price.js';

const QUICK = process.env.BENCH_QUICK === '1';
const MODEL_TTFT_MS = 300;
const MODEL_TOKENS_PER_SECOND = 50;
const EMBEDDING_DIMENSIONS = 1536;
const PLAN = QUICK
  ? {
      concurrency: [1, 10, 25],
      singleSessionRepeats: 3,
      coalescing: { rounds: 1, words: 100 },
      repeated: { batches: 3, sessions: 10 },
      turnCost: { turns: 20, sampled: [1, 2, 10, 20] },
      azureLatency: { singleRepeats: 3, sessions: 10 },
    }
  : {
      concurrency: [1, 100, 500],
      singleSessionRepeats: 15,
      coalescing: { rounds: 2, words: 500 },
      repeated: { batches: 6, sessions: 50 },
      turnCost: { turns: 300, sampled: [1, 2, 150, 300] },
      azureLatency: { singleRepeats: 15, sessions: 100 },
    };
/** The local-runtime batch size the issue sets its targets at: p99 ≤ 1 s and ≤ 2× the direct baseline's. */
const TARGET_SESSIONS = PLAN.concurrency[1];
/**
 * `turn-cost`: only (3), the cost of one turn along one long conversation; `azure-latency`: only the added time to
 * first token under the Azure latency model (npm run bench:azure-latency); `concurrency`: only (a)(c), the local
 * runtime at 1, 100 and 500 sessions beside the direct baseline (npm run bench:load).
 */
const ONLY = process.env.BENCH_ONLY;
/** Turns averaged at each end of the long conversation, so a turn that folds the summary does not stand alone. */
const TURN_COST_WINDOW = 10;
/** Batches up to this size are also read over Web PubSub (one connection per session). */
const WEB_PUBSUB_MAX_SESSIONS = 100;
const REPLY_WORDS = 20;
const MODEL_SAMPLES = 3;
const TURN_TIMEOUT_MS = 60_000;
const BATCH_TIMEOUT_MS = 300_000;
const RESULTS_FILE = QUICK ? 'bench/results/chat-pipeline-quick.json' : 'bench/results/chat-pipeline.json';
const TURN_COST_RESULTS_FILE = QUICK ? 'bench/results/turn-cost-quick.json' : 'bench/results/turn-cost.json';
const RUN_ID = randomUUID().slice(0, 8);

type Runtime = BenchChild<RuntimeReady>;

/** A runtime process and a client of its API. */
interface Target {
  name: string;
  runtime: Runtime;
  api: ChatApi;
}

/** Turns whose events broke the rules; any count above 0 fails the run. */
const integrity = {
  turnsChecked: 0,
  tokensLost: 0,
  tokensExtra: 0,
  turnsDuplicated: 0,
  turnsFailed: 0,
  /** Rejections unhandled at the end of their tick in a runtime process (each would have ended `npm start`). */
  runtimeUnhandledRejections: 0,
};
const children: BenchChild<unknown>[] = [];
const realtimeClients: SessionEvents[] = [];

function reply(words: number): string {
  return `Please reply with ${words} words.`;
}

let userCount = 0;
/** A fresh signed-in user (App Service authentication), so each session's Web PubSub traffic is its own. */
function newUser(label: string): string {
  userCount += 1;
  return `bench-${RUN_ID}-${label}-${userCount}`;
}

async function startChild<R>(file: string, label: string, options: unknown): Promise<BenchChild<R>> {
  const child = await BenchChild.start<R>(file, label, options);
  children.push(child);
  return child;
}

async function stopChild(child: BenchChild<unknown>): Promise<void> {
  children.splice(children.indexOf(child), 1);
  await child.stop();
}

/** The app's settings for a runtime that calls the model process as any OpenAI-compatible endpoint. */
function remoteModelSettings(model: ModelReady): Record<string, string> {
  return {
    LLM_PROVIDER: 'openai-compatible',
    LLM_BASE_URL: model.baseUrl,
    LLM_API_KEY: 'unused-by-the-offline-model',
    LLM_CHAT_MODEL: OFFLINE_CHAT_MODEL,
    LLM_EMBEDDING_MODEL: OFFLINE_EMBEDDING_MODEL,
    LLM_EMBEDDING_DIMENSIONS: String(EMBEDDING_DIMENSIONS),
  };
}

async function startTarget(name: string, settings: Record<string, string>): Promise<Target> {
  const runtime = await startChild<RuntimeReady>('./runtime-process.ts', `runtime "${name}"`, {
    // Callers are App Service principals, so the bench can sign in as many users as it has sessions.
    settings: { AUTH_MODE: 'app-service', ...settings },
  });
  return { name, runtime, api: new ChatApi(runtime.ready.url) };
}

/** Stops a runtime, counting the failures nothing handled while it ran. */
async function retire(target: Target): Promise<void> {
  integrity.runtimeUnhandledRejections += (await usage(target)).unhandledRejections;
  await stopChild(target.runtime);
}

function idle(target: Target): Promise<void> {
  return withTimeout(target.runtime.call('idle'), BATCH_TIMEOUT_MS, `${target.name} going idle`);
}

const usage = (target: Target) => target.runtime.call<RuntimeUsage>('usage');

async function withTimeout<T>(work: Promise<T>, ms: number, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: not done within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Counts a stream's losses and duplicates; returns whether it was whole. */
function check(trace: TurnTrace, expectedWords: number): boolean {
  integrity.turnsChecked += 1;
  const words = trace.wordArrivals.length;
  const lost = Math.max(0, expectedWords - words);
  const extra = Math.max(0, words - expectedWords);
  const duplicated = trace.starts > 1 || trace.ends > 1;
  const failed = trace.errors.length > 0 || trace.starts === 0;
  integrity.tokensLost += lost;
  integrity.tokensExtra += extra;
  if (duplicated) integrity.turnsDuplicated += 1;
  if (failed) integrity.turnsFailed += 1;
  return lost === 0 && extra === 0 && !duplicated && !failed;
}

/** POST → first content; NaN for a turn that streamed none (check() counts it as failed). */
function firstContentAfter(sentAt: number, trace: TurnTrace): number {
  return trace.firstContentAt === undefined ? Number.NaN : trace.firstContentAt - sentAt;
}

/** The distinct error events of some turns, the most frequent first (a few, for the report). */
function errorSummary(traces: readonly TurnTrace[]): string[] {
  const counts = new Map<string, number>();
  for (const message of traces.flatMap((t) => t.errors)) counts.set(message, (counts.get(message) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([, a], [, b]) => b - a)
    .slice(0, 5)
    .map(([message, count]) => `${count}× ${message}`);
}

// ---- the model alone ----

async function modelTtft(client: OpenAI, text: string): Promise<number> {
  const started = performance.now();
  const stream = await client.chat.completions.create({
    model: OFFLINE_CHAT_MODEL,
    stream: true,
    messages: [
      { role: 'system', content: BASIC_SYSTEM_PROMPT },
      { role: 'user', content: text },
    ],
  });
  let first: number | undefined;
  for await (const chunk of stream) {
    if (first === undefined && chunk.choices[0]?.delta.content) first = performance.now();
  }
  if (first === undefined) throw new Error('the model streamed no content');
  return first - started;
}

/** The model's own TTFT at rest: a few calls one after another, median. */
async function modelAtRest(client: OpenAI): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < MODEL_SAMPLES; i += 1) samples.push(await modelTtft(client, reply(REPLY_WORDS)));
  return samples;
}

// ---- one batch: N sessions, one message each, at once ----

interface BatchOptions {
  label: string;
  sessions: number;
  webPubSub: boolean;
  direct: boolean;
  /** Direct baseline first (else the pipeline first), so drifting load weighs on both alike. */
  directFirst: boolean;
}

/** What every batch reports about its streams, and how long it took. */
interface BatchIntegrity {
  peakTurnsStreaming: number;
  wallMs: number;
  tokensLost: number;
  turnsDuplicated: number;
  turnsIncomplete: number;
  assistantRepliesMissing: number;
  /** Error events the clients received, counted by message. */
  errors: string[];
  /** SSE streams that ended before their turn and were opened again with Last-Event-ID. */
  sseReconnects: number;
}

interface BatchSamples extends BatchIntegrity {
  sessions: number;
  /** Model TTFT at rest, measured just before and just after the batch. */
  modelAloneMs: number[];
  /** POST → first content, per session. */
  sseMs: number[];
  webSocketMs: number[];
  directMs: number[];
  postToMessageStartMs: number[];
  cpuMsPerTurn: number;
  directCpuMsPerTurn: number | undefined;
  eventLoopUtilisation: number;
}

interface BatchSession {
  userId: string;
  sessionId: string;
  chatMessageId: string;
  sse: TurnTrace;
  ws: TurnTrace | undefined;
  sentAt: number;
}

async function runBatch(target: Target, model: OpenAI, options: BatchOptions): Promise<BatchSamples> {
  const n = options.sessions;
  const gauge = new TurnGauge();
  const connections: SessionEvents[] = [];
  const sessions = await mapBounded(Array.from({ length: n }), 50, async (): Promise<BatchSession> => {
    const userId = newUser(options.label);
    const sessionId = await target.api.startSession(userId);
    const chatMessageId = randomUUID();
    let ws: TurnTrace | undefined;
    if (options.webPubSub) {
      const events = await SessionEvents.connect(target.api, userId, sessionId);
      connections.push(events);
      ws = events.trace(chatMessageId);
    }
    return { userId, sessionId, chatMessageId, sse: new TurnTrace(gauge), ws, sentAt: 0 };
  });
  await idle(target);
  const modelBefore = await modelAtRest(model);

  let direct: { ms: number[]; cpuMsPerTurn: number } | undefined;
  if (options.direct && options.directFirst) direct = await runDirect(target, n);
  const before = await usage(target);
  const startedAt = performance.now();
  await Promise.all(
    sessions.map(async (s) => {
      s.sentAt = performance.now();
      const streamUrl = await target.api.postChat(s.userId, s.sessionId, s.chatMessageId, reply(REPLY_WORDS));
      // A stream that breaks is counted against the turn (check() below), and the batch goes on.
      await withTimeout(
        target.api.readStream(s.userId, streamUrl, s.sse),
        BATCH_TIMEOUT_MS,
        'SSE turn',
      ).catch((error: unknown) => s.sse.errors.push(`SSE client: ${String(error)}`));
      await s.ws
        ?.finished(BATCH_TIMEOUT_MS, 'Web PubSub turn')
        .catch((error: unknown) => s.ws?.errors.push(`Web PubSub client: ${String(error)}`));
    }),
  );
  const wallMs = Math.max(...sessions.map((s) => s.sse.endedAt ?? 0)) - startedAt;
  const streamed = await usage(target);
  await idle(target);
  const after = await usage(target);
  if (options.direct && !options.directFirst) direct = await runDirect(target, n);
  const modelAfter = await modelAtRest(model);
  for (const events of connections) events.stop();

  let missing = 0;
  let duplicatedInMemory = 0;
  await mapBounded(sessions, 20, async (s) => {
    const replies = await target.runtime.call<number>('storedReplies', s);
    if (replies === 0) missing += 1;
    if (replies > 1) duplicatedInMemory += 1;
  });
  integrity.turnsFailed += missing;
  integrity.turnsDuplicated += duplicatedInMemory;
  const traces = sessions.flatMap((s) => (s.ws ? [s.sse, s.ws] : [s.sse]));
  const incomplete = traces.filter((trace) => !check(trace, REPLY_WORDS)).length;
  return {
    sessions: n,
    modelAloneMs: [...modelBefore, ...modelAfter],
    sseMs: sessions.map((s) => firstContentAfter(s.sentAt, s.sse)),
    webSocketMs: sessions.flatMap((s) => (s.ws ? [firstContentAfter(s.sentAt, s.ws)] : [])),
    directMs: direct?.ms ?? [],
    postToMessageStartMs: sessions.map((s) => (s.sse.startAt ?? Number.NaN) - s.sentAt),
    // Everything the turns made the runtime do, background work (history, memory) included.
    cpuMsPerTurn: cpuMsPer(before.cpu, after.cpu, n),
    directCpuMsPerTurn: direct?.cpuMsPerTurn,
    eventLoopUtilisation: utilisation(before.eventLoop, streamed.eventLoop),
    peakTurnsStreaming: gauge.peak,
    wallMs: round(wallMs, 0),
    tokensLost: sumOf(traces, (t) => Math.max(0, REPLY_WORDS - t.wordArrivals.length)),
    turnsDuplicated: duplicatedInMemory + traces.filter((t) => t.starts > 1 || t.ends > 1).length,
    turnsIncomplete: incomplete,
    assistantRepliesMissing: missing,
    errors: errorSummary(traces),
    sseReconnects: sumOf(sessions, (s) => s.sse.reconnects),
  };
}

/** The direct baseline at the same concurrency: N calls of the one HTTP function that streams the model. */
async function runDirect(target: Target, n: number): Promise<{ ms: number[]; cpuMsPerTurn: number }> {
  const before = await usage(target);
  const ms = await Promise.all(
    Array.from({ length: n }, async () => {
      const trace = new TurnTrace();
      const sentAt = performance.now();
      const path = target.runtime.ready.directChatPath;
      await withTimeout(
        target.api.directChat(newUser('direct'), path, reply(REPLY_WORDS), trace),
        BATCH_TIMEOUT_MS,
        'direct turn',
      );
      if (trace.errors.length > 0 || trace.wordArrivals.length !== REPLY_WORDS)
        throw new Error(`the direct baseline streamed a broken reply: ${trace.errors.join('; ')}`);
      return firstContentAfter(sentAt, trace);
    }),
  );
  const after = await usage(target);
  return { ms, cpuMsPerTurn: cpuMsPer(before.cpu, after.cpu, n) };
}

// ---- (a) and (1): added time to first token at 1, 100 and 500 sessions ----

interface ConcurrencyRow extends BatchIntegrity {
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

async function measureConcurrency(target: Target, model: OpenAI, sessions: number): Promise<ConcurrencyRow> {
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

function batchOptions(label: string, sessions: number, directFirst: boolean): BatchOptions {
  return { label, sessions, webPubSub: sessions <= WEB_PUBSUB_MAX_SESSIONS, direct: true, directFirst };
}

// ---- (b) coalescing ----

async function coalescingTurn(target: Target, words: number): Promise<TurnTrace> {
  const userId = newUser('coalescing');
  const sessionId = await target.api.startSession(userId);
  const events = await SessionEvents.connect(target.api, userId, sessionId);
  try {
    const chatMessageId = randomUUID();
    const trace = events.trace(chatMessageId);
    await target.api.postChat(userId, sessionId, chatMessageId, reply(words));
    await trace.finished(TURN_TIMEOUT_MS, `${target.name} turn`);
    check(trace, words);
    await idle(target);
    return trace;
  } finally {
    events.stop();
  }
}

/** Each word's arrival relative to the turn's first content event. */
function relativeArrivals(trace: TurnTrace): number[] {
  const first = trace.firstContentAt ?? Number.NaN;
  return trace.wordArrivals.map((at) => at - first);
}

async function measureCoalescing(coalesced: Target, uncoalesced: Target) {
  const { rounds, words } = PLAN.coalescing;
  const turns = { coalesced: [] as TurnTrace[], uncoalesced: [] as TurnTrace[] };
  for (let r = 0; r < rounds; r += 1) {
    // ABBA order, so a drift in machine load weighs on both alike.
    if (r % 2 === 0) {
      turns.coalesced.push(await coalescingTurn(coalesced, words));
      turns.uncoalesced.push(await coalescingTurn(uncoalesced, words));
    } else {
      turns.uncoalesced.push(await coalescingTurn(uncoalesced, words));
      turns.coalesced.push(await coalescingTurn(coalesced, words));
    }
  }
  const perThousand = (traces: TurnTrace[], tokens: (trace: TurnTrace) => number) =>
    round((sumOf(traces, (t) => t.contentEvents) / sumOf(traces, tokens)) * 1000);
  const messages = (traces: TurnTrace[]) => ({
    contentEventsPer1000Tokens: perThousand(traces, (t) => t.wordArrivals.length),
    contentEventsPer1000ModelTokens: perThousand(traces, (t) => t.completionTokens ?? Number.NaN),
  });
  const differences = turns.coalesced.flatMap((trace, r) => {
    const other = turns.uncoalesced[r];
    if (!other) return [];
    const later = relativeArrivals(other);
    return relativeArrivals(trace).flatMap((at, i) => (later[i] === undefined ? [] : [at - later[i]]));
  });
  const settings = ({ runtime }: Target) => ({
    flushIntervalMs: runtime.ready.flushIntervalMs,
    flushMaxChars: runtime.ready.flushMaxChars,
  });
  return {
    turnsEach: rounds,
    replyWords: words,
    coalesced: { settings: settings(coalesced), ...messages(turns.coalesced) },
    uncoalesced: { settings: settings(uncoalesced), ...messages(turns.uncoalesced) },
    addedWordLatencyMs: {
      words: differences.length,
      mean: round(mean(differences)),
      p99: round(percentile(differences, 99)),
    },
  };
}

// ---- (3) per-turn cost along one conversation ----

interface TurnCost {
  turn: number;
  /** From the POST until the runtime is idle again (the turn, then its history and memory work). */
  wallMs: number;
  cosmosRequests: number;
  cosmosRequestBytes: number;
  cosmosResponseBytes: number;
  cosmosByOperation: Record<string, number>;
  cosmosByContainer: RuntimeUsage['cosmos']['byContainer'];
  webPubSubSends: number;
  webPubSubSendBytes: number;
  webPubSubRestCalls: number;
  durableReplays: number;
  durableActivities: number;
  cpuMs: number;
  /** The turn's counts in the units Azure bills, and their price per 1,000 turns (turn-price.ts). */
  price: TurnPrice;
  /** What the local Service Bus and task hub counted (measured turns only, not means). */
  billed?: Pick<RuntimeUsage, 'serviceBus' | 'taskHub'>;
}

async function measureTurnCost(target: Target) {
  const { turns, sampled } = PLAN.turnCost;
  const userId = newUser('long');
  const sessionId = await target.api.startSession(userId);
  const events = await SessionEvents.connect(target.api, userId, sessionId);
  realtimeClients.push(events);
  // One turn of another conversation first, so turn 1 is this conversation's first turn and not the process's
  // (which also pays for the SDK's container reads and the runtime's warm-up).
  const warmSession = await target.api.startSession(userId);
  await target.api.postChat(userId, warmSession, randomUUID(), reply(REPLY_WORDS));
  await idle(target);
  const costs: TurnCost[] = [];
  const every: TurnCost[] = [];
  const startedAt = performance.now();
  for (let turn = 1; turn <= turns; turn += 1) {
    await idle(target);
    await target.runtime.call('resetStats');
    const before = await usage(target);
    const turnStartedAt = performance.now();
    const chatMessageId = randomUUID();
    const trace = events.trace(chatMessageId);
    await target.api.postChat(userId, sessionId, chatMessageId, reply(REPLY_WORDS));
    await trace.finished(TURN_TIMEOUT_MS, `turn ${turn} of the long conversation`);
    check(trace, REPLY_WORDS);
    // The turn's background work (history, memory) belongs to its cost.
    await idle(target);
    const wallMs = round(performance.now() - turnStartedAt);
    const after = await usage(target);
    const cost: TurnCost = {
      turn,
      wallMs,
      cosmosRequests: after.cosmos.requests,
      cosmosRequestBytes: after.cosmos.requestBytes,
      cosmosResponseBytes: after.cosmos.responseBytes,
      cosmosByOperation: after.cosmos.byOperation,
      cosmosByContainer: after.cosmos.byContainer,
      webPubSubSends: after.webPubSub.sends,
      webPubSubSendBytes: after.webPubSub.sendBytes,
      webPubSubRestCalls: after.webPubSub.restCalls,
      durableReplays: after.durable.replays,
      durableActivities: after.durable.activities,
      cpuMs: cpuMsPer(before.cpu, after.cpu, 1),
      price: turnPrice(turnBill(after)),
      billed: { serviceBus: after.serviceBus, taskHub: after.taskHub },
    };
    every.push(cost);
    if (sampled.includes(turn)) costs.push(cost);
  }
  const first = costs[0];
  const last = costs[costs.length - 1];
  const ratios = (a: TurnCost | undefined, b: TurnCost | undefined) => {
    const over = (value: (cost: TurnCost) => number) => (a && b ? ratio(value(b), value(a), 1e-9) : null);
    return {
      turns: `${b?.turn ?? '?'}/${a?.turn ?? '?'}`,
      cosmosRequests: over((c) => c.cosmosRequests),
      cosmosBytes: over((c) => c.cosmosRequestBytes + c.cosmosResponseBytes),
      wallMs: over((c) => c.wallMs),
      webPubSubSends: over((c) => c.webPubSubSends),
      durableReplays: over((c) => c.durableReplays),
      cpuMs: over((c) => c.cpuMs),
    };
  };
  const window = Math.min(TURN_COST_WINDOW, Math.floor(turns / 2));
  const firstWindow = meanCost(every.slice(0, window), `1–${window}`);
  const lastWindow = meanCost(every.slice(-window), `${turns - window + 1}–${turns}`);
  return {
    turns,
    replyWords: REPLY_WORDS,
    wallMs: round(performance.now() - startedAt, 0),
    costs,
    lastOverFirst: ratios(first, last),
    windows: { first: firstWindow, last: lastWindow, lastOverFirst: ratios(firstWindow, lastWindow) },
    taskHubPolling: await readTaskHubPolling(),
  };
}

/** The mean cost of some turns (its `turn` is the first's; `label` names the range). */
function meanCost(costs: readonly TurnCost[], label: string): TurnCost & { label: string } {
  const mean = (value: (cost: TurnCost) => number) =>
    round(costs.reduce((sum, cost) => sum + value(cost), 0) / Math.max(1, costs.length));
  return {
    label,
    turn: costs[0]?.turn ?? 0,
    wallMs: mean((c) => c.wallMs),
    cosmosRequests: mean((c) => c.cosmosRequests),
    cosmosRequestBytes: mean((c) => c.cosmosRequestBytes),
    cosmosResponseBytes: mean((c) => c.cosmosResponseBytes),
    cosmosByOperation: {},
    cosmosByContainer: {},
    webPubSubSends: mean((c) => c.webPubSubSends),
    webPubSubSendBytes: mean((c) => c.webPubSubSendBytes),
    webPubSubRestCalls: mean((c) => c.webPubSubRestCalls),
    durableReplays: mean((c) => c.durableReplays),
    durableActivities: mean((c) => c.durableActivities),
    cpuMs: mean((c) => c.cpuMs),
    price: meanPrice(costs.map((c) => c.price)),
  };
}

// ---- (4) repeated batches ----

async function measureRepeatedBatches(target: Target, model: OpenAI) {
  const { batches, sessions } = PLAN.repeated;
  const rows = [];
  for (let b = 1; b <= batches; b += 1) {
    const samples = await runBatch(target, model, {
      label: `repeat${b}`,
      sessions,
      webPubSub: false,
      direct: false,
      directFirst: false,
    });
    const atRest = percentile(samples.modelAloneMs, 50);
    const after = await usage(target);
    rows.push({
      batch: b,
      wallMs: samples.wallMs,
      addedTtftP50Ms: round(percentile(samples.sseMs, 50) - atRest),
      addedTtftP99Ms: round(percentile(samples.sseMs, 99) - atRest),
      cpuMsPerTurn: samples.cpuMsPerTurn,
      runtimeRssMb: round(after.rssBytes / 2 ** 20, 0),
      tokensLost: samples.tokensLost,
      turnsDuplicated: samples.turnsDuplicated,
    });
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  return {
    batches,
    sessions,
    replyWords: REPLY_WORDS,
    rows,
    lastOverFirst: {
      wallMs: first && last ? ratio(last.wallMs, first.wallMs) : null,
      addedTtftP50: first && last ? ratio(last.addedTtftP50Ms, first.addedTtftP50Ms) : null,
    },
  };
}

// ---- report ----

type Results = {
  quick: boolean;
  machine: { cpus: number; node: string; note: string };
  model: { ttftMs: number; tokensPerSecond: number; where: string };
  azureLatency: AzureLatencyResults;
  concurrency: ConcurrencyRow[];
  coalescing: Awaited<ReturnType<typeof measureCoalescing>>;
  turnCost: Awaited<ReturnType<typeof measureTurnCost>>;
  repeatedBatches: Awaited<ReturnType<typeof measureRepeatedBatches>>;
  integrity: typeof integrity;
};

const ms = (value: number | undefined) => (value === undefined ? '—' : `${value.toFixed(1)} ms`);
const pct = (p: Percentiles | undefined) => (p ? `p50 ${ms(p.p50)}, p99 ${ms(p.p99)}` : '—');
const times = (value: number | null) => (value === null ? 'n/a (baseline adds ~0)' : `${value}×`);
const row = (label: string, value: string | number) => console.log(`    ${label.padEnd(58)} ${value}`);

function printConcurrency(rows: ConcurrencyRow[]): void {
  console.log(
    `\n(a)(c) Time to first token added around the model: POST → first content − model alone at rest ` +
      `("${reply(REPLY_WORDS)}", one message per session, all posted at once)`,
  );
  for (const r of rows) {
    const batches = r.batches > 1 ? ` (${r.batches} batches, one after another)` : '';
    console.log(`  ${r.sessions} session${r.sessions > 1 ? 's' : ''} at once${batches}`);
    row('model alone at rest (interleaved with the batches)', pct(r.modelAloneMs));
    if (r.modelAtConcurrencyMs) row(`model alone, ${r.sessions} calls at once`, pct(r.modelAtConcurrencyMs));
    row('added: direct baseline (one HTTP function → SSE)', pct(r.addedMs.direct));
    row('added: pipeline, SSE client (opened when POST returned)', pct(r.addedMs.sse));
    if (r.addedMs.webSocket)
      row('added: pipeline, Web PubSub client (connected before)', pct(r.addedMs.webSocket));
    const ratios = r.addedRatioOverDirect;
    row(
      'pipeline added ÷ baseline added (SSE p50 / SSE p99 / WS p50)',
      `${times(ratios.sseP50)} / ${times(ratios.sseP99)} / ${times(ratios.webSocketP50)}`,
    );
    if (r.sessions === TARGET_SESSIONS) {
      const within = (limit: number) => (r.addedMs.sse.p99 <= limit ? 'yes' : 'no');
      row(
        'target: SSE added p99 ≤ 1 s / ≤ 2× the direct baseline p99',
        `${within(1000)} / ${within(2 * r.addedMs.direct.p99)}`,
      );
    }
    row('POST → message-start (queue, worker, prepareTurn)', pct(r.postToMessageStartMs));
    row(
      'runtime CPU per turn: pipeline (until idle) / direct',
      `${r.cpuMsPerTurn.pipeline} ms / ${r.cpuMsPerTurn.direct ?? '—'} ms`,
    );
    row(
      'runtime event-loop utilisation while streaming',
      `${(r.runtimeEventLoopUtilisation * 100).toFixed(0)} %`,
    );
    row('most turns streaming at once (seen by SSE clients)', r.peakTurnsStreaming);
    row('wall time (first POST → last message-end)', `${r.wallMs} ms`);
    row('SSE streams reopened with Last-Event-ID (ended before the turn)', r.sseReconnects);
    row(
      'tokens lost / turns duplicated / incomplete / replies missing',
      `${r.tokensLost} / ${r.turnsDuplicated} / ${r.turnsIncomplete} / ${r.assistantRepliesMissing}`,
    );
    for (const error of r.errors) row('  error events', error);
  }
}

function printCoalescing(c: Results['coalescing']): void {
  const settings = (s: { flushIntervalMs: number; flushMaxChars: number }) =>
    `(flush ${s.flushIntervalMs} ms / ${s.flushMaxChars} chars)`;
  console.log(`\n(b) Coalescing: "${reply(c.replyWords)}", ${c.turnsEach} turn(s) per runtime, interleaved`);
  console.log('    content events per 1,000 tokens (tokens = words; per 1,000 model tokens in brackets)');
  const perThousand = (m: { contentEventsPer1000Tokens: number; contentEventsPer1000ModelTokens: number }) =>
    `${m.contentEventsPer1000Tokens} (${m.contentEventsPer1000ModelTokens})`;
  row(`  coalescing ${settings(c.coalesced.settings)}`, perThousand(c.coalesced));
  row(`  no coalescing ${settings(c.uncoalesced.settings)}`, perThousand(c.uncoalesced));
  const saved = c.uncoalesced.contentEventsPer1000Tokens / c.coalesced.contentEventsPer1000Tokens;
  row('  events saved by coalescing', `${saved.toFixed(1)}× fewer`);
  console.log(
    `    latency coalescing adds to each word (coalescing − none, ${c.addedWordLatencyMs.words} words)`,
  );
  row('  per-word difference', `mean ${ms(c.addedWordLatencyMs.mean)}, p99 ${ms(c.addedWordLatencyMs.p99)}`);
}

function printTurnCost(t: Results['turnCost']): void {
  console.log(
    `\n(3) Cost of one turn along one conversation of ${t.turns} turns (fast model; each turn measured ` +
      `from its POST until the runtime is idle again, background work included; ${t.wallMs} ms in all)`,
  );
  const header = [
    'turn',
    'wall ms',
    'cosmos req',
    'cosmos bytes',
    'WPS sends',
    'WPS bytes',
    'replays',
    'activities',
    'CPU ms',
  ];
  console.log(`    ${header.map((h) => h.padStart(13)).join('')}`);
  for (const c of [...t.costs, t.windows.first, t.windows.last]) {
    const cells = [
      'label' in c ? `mean ${String(c.label)}` : c.turn,
      c.wallMs,
      c.cosmosRequests,
      round(c.cosmosRequestBytes + c.cosmosResponseBytes),
      c.webPubSubSends,
      c.webPubSubSendBytes,
      c.durableReplays,
      c.durableActivities,
      c.cpuMs,
    ];
    console.log(`    ${cells.map((cell) => String(cell).padStart(13)).join('')}`);
  }
  for (const r of [t.lastOverFirst, t.windows.lastOverFirst])
    row(
      `turn ${r.turns}: Cosmos requests / bytes / wall / WPS sends / replays / CPU`,
      [r.cosmosRequests, r.cosmosBytes, r.wallMs, r.webPubSubSends, r.durableReplays, r.cpuMs]
        .map(times)
        .join(' / '),
    );
  console.log('    Cosmos requests (bytes, request units) by container and operation');
  const places = [...new Set(t.costs.flatMap((c) => Object.keys(c.cosmosByContainer)))].sort();
  for (const place of places) {
    row(
      `  ${place}`,
      t.costs
        .map((c) => {
          const entry = c.cosmosByContainer[place];
          return `t${c.turn}: ${entry?.requests ?? 0} (${entry?.bytes ?? 0} B, ${round(entry?.requestUnits ?? 0)} RU)`;
        })
        .join('  '),
    );
  }
  console.log('    Cosmos requests by operation');
  const operations = [...new Set(t.costs.flatMap((c) => Object.keys(c.cosmosByOperation)))].sort();
  for (const operation of operations) {
    row(
      `  ${operation}`,
      t.costs.map((c) => `t${c.turn}: ${c.cosmosByOperation[operation] ?? 0}`).join('  '),
    );
  }
  for (const c of t.costs) {
    const { serviceBus, taskHub } = c.billed ?? {};
    row(`  turn ${c.turn}: Service Bus operations`, JSON.stringify(serviceBus));
    row(`  turn ${c.turn}: task-hub events`, JSON.stringify(taskHub));
  }
  printTurnPrices(
    'Azure cost of one turn without the model, per 1,000 turns (USD, pay-as-you-go; check your region):',
    t.costs.map((c) => ({ label: `turn ${c.turn}`, price: c.price })),
  );
  printTurnPrices(
    `The same, averaged over turns ${t.windows.first.label} and ${t.windows.last.label}:`,
    [t.windows.first, t.windows.last].map((w) => ({ label: w.label, price: w.price })),
    t.taskHubPolling,
  );
}

function printRepeated(r: Results['repeatedBatches']): void {
  console.log(
    `\n(4) The same batch (${r.sessions} new sessions, one message each) ${r.batches} times on one runtime`,
  );
  for (const b of r.rows) {
    row(
      `  batch ${b.batch}`,
      `wall ${b.wallMs} ms, added TTFT p50 ${ms(b.addedTtftP50Ms)} (p99 ${ms(b.addedTtftP99Ms)}), ` +
        `CPU ${b.cpuMsPerTurn} ms/turn, RSS ${b.runtimeRssMb} MB, lost ${b.tokensLost}, dup ${b.turnsDuplicated}`,
    );
  }
  row(
    'last ÷ first: wall time / added TTFT p50',
    `${times(r.lastOverFirst.wallMs)} / ${times(r.lastOverFirst.addedTtftP50)}`,
  );
}

function printReport(r: Results): void {
  console.log(
    `\nChat turn core benchmark${r.quick ? ' (BENCH_QUICK: smoke sizes)' : ''}: offline model at TTFT ` +
      `${r.model.ttftMs} ms and ${r.model.tokensPerSecond} tokens/s (${r.model.where}); ` +
      `${r.machine.cpus} CPUs, Node ${r.machine.node}`,
  );
  console.log(`  ${r.machine.note}`);
  printAzureLatency(r.azureLatency);
  printConcurrency(r.concurrency);
  printCoalescing(r.coalescing);
  printTurnCost(r.turnCost);
  printRepeated(r.repeatedBatches);
  const i = r.integrity;
  console.log(`\nIntegrity over all ${i.turnsChecked} turn streams (Web PubSub and SSE)`);
  row('tokens lost / extra', `${i.tokensLost} / ${i.tokensExtra}`);
  row('turns duplicated / failed', `${i.turnsDuplicated} / ${i.turnsFailed}`);
  row('rejections left unhandled in a runtime (npm start exits)', i.runtimeUnhandledRejections);
}

async function writeResults(results: Results): Promise<void> {
  await mkdir('bench/results', { recursive: true });
  const options = (await resolveConfig(RESULTS_FILE)) ?? {};
  await writeFile(RESULTS_FILE, await format(JSON.stringify(results), { ...options, parser: 'json' }));
  console.log(`\nWritten to ${RESULTS_FILE}`);
}

function progress(step: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${step}`);
}

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
  return Object.entries(integrity).every(([key, value]) => key === 'turnsChecked' || value === 0);
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
  return Object.entries(integrity).every(([key, value]) => key === 'turnsChecked' || value === 0);
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
  return Object.entries(integrity).every(([key, value]) => key === 'turnsChecked' || value === 0);
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
  return Object.entries(integrity).every(([key, value]) => key === 'turnsChecked' || value === 0);
}

async function stopAll(): Promise<void> {
  for (const client of realtimeClients.splice(0)) client.stop();
  for (const child of [...children].reverse()) await stopChild(child);
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
