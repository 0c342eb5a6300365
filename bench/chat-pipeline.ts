// What the chat pipeline adds around the model, measured in one run against the local runtime with the offline
// model at a realistic speed: (a) time to first token at a WebSocket and an SSE client beside the model's own,
// (b) Web PubSub messages and latency with and without coalescing, (c) 100 sessions posted at once. Prints a
// report and writes it to bench/results/chat-pipeline.json. It asserts nothing about speed: it exits non-zero
// only when a turn lost or duplicated tokens or turns, or something broke.
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import OpenAI from 'openai';
import { format, resolveConfig } from 'prettier';
import { createLogHandler } from '../local/log.js';
import { OFFLINE_CHAT_MODEL } from '../local/offline-model/offline-model.js';
import {
  startOfflineModelServer,
  type OfflineModelServer,
} from '../local/offline-model/offline-model-server.js';
import { OFFLINE_MODEL_PATH, startLocalRuntime, type LocalRuntime } from '../local/runtime.js';
import { BASIC_SYSTEM_PROMPT } from '../shared/chat/prompt.js';
import { readHostSettings } from '../local/host-json.js';
import { provideApp } from '../shared/app/app.js';
import { ChatApi, TurnGauge, TurnTrace, UserEvents } from './chat-clients.js';

const MODEL_TTFT_MS = 300;
const MODEL_TOKENS_PER_SECOND = 50;
const USERS = ['user_001', 'user_002', 'user_003'] as const;
const TTFT_TURNS = 15;
const TTFT_WARMUP_TURNS = 2;
const TTFT_WORDS = 20;
const COALESCING_ROUNDS = 2;
const COALESCING_WORDS = 500;
const CONCURRENT_SESSIONS = 100;
const CONCURRENT_WORDS = 60;
const TURN_TIMEOUT_MS = 60_000;
const CONCURRENT_TIMEOUT_MS = 150_000;
const RESULTS_FILE = 'bench/results/chat-pipeline.json';

/** A runtime with its own clients: the API, and one Web PubSub connection per dev user. */
interface Target {
  name: string;
  runtime: LocalRuntime;
  api: ChatApi;
  users: Map<string, UserEvents>;
  gauge: TurnGauge;
}

/** Turns whose events broke the rules; any count above 0 fails the run. */
const integrity = { turnsChecked: 0, tokensLost: 0, tokensExtra: 0, turnsDuplicated: 0, turnsFailed: 0 };
const targets: Target[] = [];

async function startTarget(name: string, settings: Record<string, string>): Promise<Target> {
  await allIdle();
  const runtime = await startLocalRuntime({
    port: 0,
    dataDir: undefined,
    settings: {
      OFFLINE_MODEL_TTFT_MS: String(MODEL_TTFT_MS),
      OFFLINE_MODEL_TOKENS_PER_SECOND: String(MODEL_TOKENS_PER_SECOND),
      ...settings,
    },
    logHandler: createLogHandler('error'),
  });
  const api = new ChatApi(runtime.url);
  const gauge = new TurnGauge();
  const target: Target = { name, runtime, api, users: new Map(), gauge };
  targets.push(target);
  for (const userId of USERS) target.users.set(userId, await UserEvents.connect(api, userId, gauge));
  return target;
}

/**
 * The app is made once per process (shared/app/app.ts), and every runtime started here
 * provides its own: before a runtime serves turns, every runtime is left idle and its app is chosen.
 */
async function activate(target: Target): Promise<void> {
  await allIdle();
  provideApp(() => Promise.resolve(target.runtime.app));
}

function allIdle(): Promise<unknown> {
  const idle = Promise.all(targets.map((t) => t.runtime.serviceBus.idle()));
  return withTimeout(idle, TURN_TIMEOUT_MS, 'waiting for the runtimes to go idle');
}

function userEvents(target: Target, userId: string): UserEvents {
  const events = target.users.get(userId);
  if (!events) throw new Error(`no Web PubSub client for ${userId}`);
  return events;
}

function check(trace: TurnTrace, expectedWords: number): void {
  integrity.turnsChecked += 1;
  const words = trace.wordArrivals.length;
  integrity.tokensLost += Math.max(0, expectedWords - words);
  integrity.tokensExtra += Math.max(0, words - expectedWords);
  if (trace.starts > 1 || trace.ends > 1) integrity.turnsDuplicated += 1;
  if (trace.errors.length > 0 || trace.starts === 0) integrity.turnsFailed += 1;
}

function reply(words: number): string {
  return `Please reply with ${words} words.`;
}

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

// ---- statistics ----

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

interface Spread {
  median: number;
  p90: number;
}

function spread(values: readonly number[]): Spread {
  return { median: round(percentile(values, 50)), p90: round(percentile(values, 90)) };
}

// ---- (a) time to first token ----

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

interface TtftSample {
  ws: number;
  sse: number;
  model: number;
}

async function ttftTurn(target: Target, model: OpenAI, sessionId: string): Promise<TtftSample> {
  const text = reply(TTFT_WORDS);
  const modelMs = await modelTtft(model, text);
  const userId = USERS[0];
  const chatMessageId = randomUUID();
  const ws = userEvents(target, userId).trace(chatMessageId);
  const sse = new TurnTrace();
  const sentAt = performance.now();
  await target.api.postChat(userId, sessionId, chatMessageId, text);
  const streamed = target.api.readStream(userId, sessionId, chatMessageId, sse);
  await Promise.all([
    ws.finished(TURN_TIMEOUT_MS, 'WebSocket turn'),
    withTimeout(streamed, TURN_TIMEOUT_MS, 'SSE turn'),
  ]);
  check(ws, TTFT_WORDS);
  check(sse, TTFT_WORDS);
  // Each turn starts once the previous one and its background work (history, memory) are done.
  await allIdle();
  return { ws: since(sentAt, ws), sse: since(sentAt, sse), model: modelMs };
}

function since(sentAt: number, trace: TurnTrace): number {
  if (trace.firstContentAt === undefined) throw new Error('a turn ended without content');
  return trace.firstContentAt - sentAt;
}

async function measureTtft(target: Target, modelServer: OfflineModelServer) {
  await activate(target);
  const model = new OpenAI({ baseURL: modelServer.baseUrl, apiKey: 'unused' });
  const sessionId = await target.api.startSession(USERS[0]);
  const samples: TtftSample[] = [];
  for (let turn = 0; turn < TTFT_WARMUP_TURNS + TTFT_TURNS; turn += 1) {
    const sample = await ttftTurn(target, model, sessionId);
    if (turn >= TTFT_WARMUP_TURNS) samples.push(sample);
  }
  const ws = spread(samples.map((s) => s.ws));
  const sse = spread(samples.map((s) => s.sse));
  const modelOnly = spread(samples.map((s) => s.model));
  const added = (pipeline: Spread) => ({
    median: round(pipeline.median - modelOnly.median),
    p90: round(pipeline.p90 - modelOnly.p90),
  });
  return {
    turns: samples.length,
    warmupTurns: TTFT_WARMUP_TURNS,
    replyWords: TTFT_WORDS,
    webSocketMs: ws,
    sseMs: sse,
    modelOnlyMs: modelOnly,
    addedWebSocketMs: added(ws),
    addedSseMs: added(sse),
  };
}

// ---- (b) coalescing ----

async function coalescingTurn(target: Target): Promise<TurnTrace> {
  await activate(target);
  const userId = USERS[1];
  const sessionId = await target.api.startSession(userId);
  const chatMessageId = randomUUID();
  const trace = userEvents(target, userId).trace(chatMessageId);
  await target.api.postChat(userId, sessionId, chatMessageId, reply(COALESCING_WORDS));
  await trace.finished(TURN_TIMEOUT_MS, `${target.name} turn`);
  check(trace, COALESCING_WORDS);
  return trace;
}

/** Each word's arrival relative to the turn's first content event. */
function relativeArrivals(trace: TurnTrace): number[] {
  const first = trace.firstContentAt ?? Number.NaN;
  return trace.wordArrivals.map((at) => at - first);
}

async function measureCoalescing(coalesced: Target, uncoalesced: Target) {
  const turns = { coalesced: [] as TurnTrace[], uncoalesced: [] as TurnTrace[] };
  for (let r = 0; r < COALESCING_ROUNDS; r += 1) {
    // ABBA order, so a drift in machine load weighs on both alike.
    if (r % 2 === 0) {
      turns.coalesced.push(await coalescingTurn(coalesced));
      turns.uncoalesced.push(await coalescingTurn(uncoalesced));
    } else {
      turns.uncoalesced.push(await coalescingTurn(uncoalesced));
      turns.coalesced.push(await coalescingTurn(coalesced));
    }
  }
  const perThousand = (traces: TurnTrace[], tokens: (trace: TurnTrace) => number) =>
    round((sumOf(traces, (t) => t.contentEvents) / sumOf(traces, tokens)) * 1000);
  const messages = (traces: TurnTrace[]) => ({
    contentMessagesPer1000Tokens: perThousand(traces, (t) => t.wordArrivals.length),
    contentMessagesPer1000ModelTokens: perThousand(traces, (t) => t.completionTokens ?? Number.NaN),
  });
  const differences = turns.coalesced.flatMap((trace, r) => {
    const other = turns.uncoalesced[r];
    if (!other) return [];
    const later = relativeArrivals(other);
    return relativeArrivals(trace).flatMap((at, i) => (later[i] === undefined ? [] : [at - later[i]]));
  });
  const settings = ({ runtime }: Target) => {
    const { flushIntervalMs, flushMaxChars } = runtime.config.streaming;
    return { flushIntervalMs, flushMaxChars };
  };
  return {
    turnsEach: COALESCING_ROUNDS,
    replyWords: COALESCING_WORDS,
    coalesced: { settings: settings(coalesced), ...messages(turns.coalesced) },
    uncoalesced: { settings: settings(uncoalesced), ...messages(turns.uncoalesced) },
    addedWordLatencyMs: {
      words: differences.length,
      mean: round(mean(differences)),
      p99: round(percentile(differences, 99)),
    },
  };
}

// ---- (c) concurrent sessions ----

interface ConcurrentTurn {
  userId: string;
  sessionId: string;
  chatMessageId: string;
  trace: TurnTrace;
  sentAt: number;
}

/** The session concurrency the local runtime gives the triggers: host.json's, read as the runtime reads it. */
async function hostSessionConcurrency(): Promise<number | undefined> {
  return (await readHostSettings()).serviceBus.maxConcurrentSessions;
}

async function storedAssistantReplies(target: Target, turn: ConcurrentTurn): Promise<number> {
  const memory = await target.runtime.app.chat.turn.workingMemory.load(turn.userId, turn.sessionId);
  return memory.messages.filter((m) => m.chatMessageId === turn.chatMessageId && m.role === 'assistant')
    .length;
}

async function measureConcurrency(target: Target) {
  await activate(target);
  const sessions = await Promise.all(
    Array.from({ length: CONCURRENT_SESSIONS }, async (_, i) => {
      const userId = USERS[i % USERS.length] ?? USERS[0];
      return { userId, sessionId: await target.api.startSession(userId) };
    }),
  );
  const turns: ConcurrentTurn[] = sessions.map(({ userId, sessionId }) => {
    const chatMessageId = randomUUID();
    return {
      userId,
      sessionId,
      chatMessageId,
      trace: userEvents(target, userId).trace(chatMessageId),
      sentAt: 0,
    };
  });
  target.gauge.reset();
  const loopBefore = performance.eventLoopUtilization();
  const startedAt = performance.now();
  await Promise.all(
    turns.map((turn) => {
      turn.sentAt = performance.now();
      return target.api.postChat(turn.userId, turn.sessionId, turn.chatMessageId, reply(CONCURRENT_WORDS));
    }),
  );
  await Promise.all(turns.map((turn) => turn.trace.finished(CONCURRENT_TIMEOUT_MS, 'concurrent turn')));
  const wallMs = Math.max(...turns.map((turn) => turn.trace.endedAt ?? Number.NaN)) - startedAt;
  const loop = performance.eventLoopUtilization(loopBefore);
  await allIdle();

  let duplicatedInMemory = 0;
  let missingInMemory = 0;
  for (const turn of turns) {
    check(turn.trace, CONCURRENT_WORDS);
    const replies = await storedAssistantReplies(target, turn);
    if (replies > 1) duplicatedInMemory += 1;
    if (replies === 0) missingInMemory += 1;
  }
  integrity.turnsDuplicated += duplicatedInMemory;
  integrity.turnsFailed += missingInMemory;
  const ttft = MODEL_TTFT_MS;
  const added = turns.map((turn) => since(turn.sentAt, turn.trace) - ttft);
  const toStart = turns.map((turn) => (turn.trace.startAt ?? Number.NaN) - turn.sentAt);
  return {
    sessions: CONCURRENT_SESSIONS,
    users: USERS.length,
    replyWords: CONCURRENT_WORDS,
    sessionConcurrency: {
      hostJson: (await hostSessionConcurrency()) ?? 'host default',
      observedPeakTurns: target.gauge.peak,
    },
    addedTtftMs: { p50: round(percentile(added, 50)), p99: round(percentile(added, 99)) },
    postToMessageStartMs: { p50: round(percentile(toStart, 50)), p99: round(percentile(toStart, 99)) },
    tokensLost: sumOf(turns, (t) => Math.max(0, CONCURRENT_WORDS - t.trace.wordArrivals.length)),
    turnsDuplicated: duplicatedInMemory + turns.filter((t) => t.trace.starts > 1 || t.trace.ends > 1).length,
    assistantRepliesMissing: missingInMemory,
    eventLoopUtilisation: round(loop.utilization, 3),
    wallMs: round(wallMs, 0),
  };
}

function sumOf<T>(items: readonly T[], value: (item: T) => number): number {
  return items.reduce((sum, item) => sum + value(item), 0);
}

// ---- report ----

type Results = {
  machine: { cpus: number; node: string };
  model: { ttftMs: number; tokensPerSecond: number };
  ttft: Awaited<ReturnType<typeof measureTtft>>;
  coalescing: Awaited<ReturnType<typeof measureCoalescing>>;
  concurrency: Awaited<ReturnType<typeof measureConcurrency>>;
  integrity: typeof integrity;
};

const ms = (value: number) => `${value.toFixed(1)} ms`;
const spreadText = (s: Spread) => `median ${ms(s.median)}, p90 ${ms(s.p90)}`;
const row = (label: string, value: string | number) => console.log(`    ${label.padEnd(56)} ${value}`);

function printTtft(t: Results['ttft']): void {
  console.log(`\n(a) Time to first token: POST /api/chat → first content event`);
  console.log(
    `    ${t.turns} sequential turns of "${reply(t.replyWords)}" after ${t.warmupTurns} warm-up turns`,
  );
  row('WebSocket client (connected before the POST)', spreadText(t.webSocketMs));
  row('SSE client (opened when the POST returned)', spreadText(t.sseMs));
  row('model alone (openai client, same prompt, interleaved)', spreadText(t.modelOnlyMs));
  row('added by the pipeline, WebSocket (pipeline − model)', spreadText(t.addedWebSocketMs));
  row('added by the pipeline, SSE (pipeline − model)', spreadText(t.addedSseMs));
}

function printCoalescing(c: Results['coalescing']): void {
  const settings = (s: { flushIntervalMs: number; flushMaxChars: number }) =>
    `(flush ${s.flushIntervalMs} ms / ${s.flushMaxChars} chars)`;
  console.log(`\n(b) Coalescing: "${reply(c.replyWords)}", ${c.turnsEach} turns per runtime, interleaved`);
  console.log('    content messages per 1,000 tokens (tokens = words; per 1,000 model tokens in brackets)');
  const perThousand = (m: {
    contentMessagesPer1000Tokens: number;
    contentMessagesPer1000ModelTokens: number;
  }) => `${m.contentMessagesPer1000Tokens} (${m.contentMessagesPer1000ModelTokens})`;
  row(`  coalescing ${settings(c.coalesced.settings)}`, perThousand(c.coalesced));
  row(`  no coalescing ${settings(c.uncoalesced.settings)}`, perThousand(c.uncoalesced));
  const ratio = c.uncoalesced.contentMessagesPer1000Tokens / c.coalesced.contentMessagesPer1000Tokens;
  row('  messages saved by coalescing', `${ratio.toFixed(1)}× fewer`);
  console.log(
    `    latency coalescing adds to each word (arrival after the turn's first content event, ` +
      `coalescing − none, ${c.addedWordLatencyMs.words} words)`,
  );
  row('  per-word difference', `mean ${ms(c.addedWordLatencyMs.mean)}, p99 ${ms(c.addedWordLatencyMs.p99)}`);
}

function printConcurrency(c: Results['concurrency'], modelTtftMs: number): void {
  const p = (v: { p50: number; p99: number }) => `p50 ${ms(v.p50)}, p99 ${ms(v.p99)}`;
  console.log(
    `\n(c) ${c.sessions} sessions over ${c.users} dev users, one "${reply(c.replyWords)}" each, posted at once`,
  );
  const sc = c.sessionConcurrency;
  row('session concurrency (host.json maxConcurrentSessions)', String(sc.hostJson));
  row('  most turns seen streaming at once', sc.observedPeakTurns);
  row(`added TTFT (POST → first content − ${modelTtftMs} ms)`, p(c.addedTtftMs));
  row('  POST → message-start (queue, worker, prepareTurn)', p(c.postToMessageStartMs));
  row(
    'event loop utilisation of the process (runtime+clients)',
    `${(c.eventLoopUtilisation * 100).toFixed(0)} %`,
  );
  row('tokens lost', c.tokensLost);
  row('turns duplicated (events or working memory)', c.turnsDuplicated);
  row('assistant replies missing from working memory', c.assistantRepliesMissing);
  row('wall time (first POST → last message-end)', `${c.wallMs} ms`);
}

function printReport(r: Results): void {
  console.log(
    `\nChat pipeline benchmark: local runtime, offline model at TTFT ${r.model.ttftMs} ms and ` +
      `${r.model.tokensPerSecond} tokens/s (${r.machine.cpus} CPUs, Node ${r.machine.node})`,
  );
  printTtft(r.ttft);
  printCoalescing(r.coalescing);
  printConcurrency(r.concurrency, r.model.ttftMs);
  const i = r.integrity;
  console.log(`\nIntegrity over all ${i.turnsChecked} turn streams (WebSocket and SSE)`);
  row('tokens lost / extra', `${i.tokensLost} / ${i.tokensExtra}`);
  row('turns duplicated / failed', `${i.turnsDuplicated} / ${i.turnsFailed}`);
}

async function writeResults(results: Results): Promise<void> {
  await mkdir('bench/results', { recursive: true });
  const options = (await resolveConfig(RESULTS_FILE)) ?? {};
  await writeFile(RESULTS_FILE, await format(JSON.stringify(results), { ...options, parser: 'json' }));
  console.log(`\nWritten to ${RESULTS_FILE}`);
}

async function main(): Promise<boolean> {
  const modelServer = await startOfflineModelServer({
    pathPrefix: OFFLINE_MODEL_PATH,
    ttftMs: MODEL_TTFT_MS,
    tokensPerSecond: MODEL_TOKENS_PER_SECOND,
  });
  try {
    const coalesced = await startTarget('coalescing', {});
    const uncoalesced = await startTarget('no coalescing', { STREAM_FLUSH_INTERVAL_MS: '0' });
    const results: Results = {
      machine: { cpus: availableParallelism(), node: process.version },
      model: { ttftMs: MODEL_TTFT_MS, tokensPerSecond: MODEL_TOKENS_PER_SECOND },
      ttft: await measureTtft(coalesced, modelServer),
      coalescing: await measureCoalescing(coalesced, uncoalesced),
      concurrency: await measureConcurrency(coalesced),
      integrity,
    };
    printReport(results);
    await writeResults(results);
    return Object.entries(integrity).every(([key, value]) => key === 'turnsChecked' || value === 0);
  } finally {
    await stopTargets();
    await modelServer.close();
  }
}

async function stopTargets(): Promise<void> {
  for (const target of [...targets].reverse()) {
    for (const events of target.users.values()) events.stop();
    // A runtime left busy by a failure is stopped all the same.
    await activate(target).catch(() => provideApp(() => Promise.resolve(target.runtime.app)));
    await target.runtime.stop();
    targets.splice(targets.indexOf(target), 1);
  }
}

try {
  if (!(await main())) {
    console.error('FAILED: tokens were lost or turns duplicated or failed (see the report above).');
    process.exitCode = 1;
  }
} catch (error) {
  console.error('FAILED:', error);
  process.exit(1);
}
