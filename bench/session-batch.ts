// One batch of the chat pipeline bench: N new sessions posting one message each at once, read over SSE (and Web
// PubSub up to a size), beside the model alone at rest and the direct baseline at the same concurrency.
import { randomUUID } from 'node:crypto';
import type OpenAI from 'openai';
import { OFFLINE_CHAT_MODEL } from '../local/offline-model/offline-model.js';
import { mapBounded } from '../shared/bounded-parallel.js';
import { BASIC_SYSTEM_PROMPT } from '../shared/chat/prompt.js';
import { SessionEvents, TurnGauge, TurnTrace } from './chat-clients.js';
import { cpuMsPer, round, sumOf, utilisation } from './figures.js';
import {
  BATCH_TIMEOUT_MS,
  check,
  errorSummary,
  firstContentAfter,
  idle,
  integrity,
  newUser,
  reply,
  REPLY_WORDS,
  usage,
  withTimeout,
  type Target,
} from './pipeline-harness.js';

/** Batches up to this size are also read over Web PubSub (one connection per session). */
const WEB_PUBSUB_MAX_SESSIONS = 100;
const MODEL_SAMPLES = 3;

// ---- the model alone ----

export async function modelTtft(client: OpenAI, text: string): Promise<number> {
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
export interface BatchIntegrity {
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

export interface BatchSamples extends BatchIntegrity {
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

export async function runBatch(target: Target, model: OpenAI, options: BatchOptions): Promise<BatchSamples> {
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

export function batchOptions(label: string, sessions: number, directFirst: boolean): BatchOptions {
  return { label, sessions, webPubSub: sessions <= WEB_PUBSUB_MAX_SESSIONS, direct: true, directFirst };
}
