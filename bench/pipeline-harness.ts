// The run that every section of the chat pipeline bench shares: its plan and sizes, the child processes (runtimes,
// models) it starts and stops, the users it signs in as, and the integrity count of every turn stream it reads.
import { randomUUID } from 'node:crypto';
import { OFFLINE_CHAT_MODEL, OFFLINE_EMBEDDING_MODEL } from '../local/offline-model/offline-model.js';
import { BenchChild } from './child-process.js';
import { ChatApi, type SessionEvents, type TurnTrace } from './chat-clients.js';
import type { ModelReady } from './model-process.js';
import type { RuntimeReady, RuntimeUsage } from './runtime-process.js';

export const QUICK = process.env.BENCH_QUICK === '1';
export const MODEL_TTFT_MS = 300;
export const MODEL_TOKENS_PER_SECOND = 50;
export const EMBEDDING_DIMENSIONS = 1536;
export const PLAN = QUICK
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
export const REPLY_WORDS = 20;
export const TURN_TIMEOUT_MS = 60_000;
export const BATCH_TIMEOUT_MS = 300_000;
const RUN_ID = randomUUID().slice(0, 8);
type Runtime = BenchChild<RuntimeReady>;

/** A runtime process and a client of its API. */
export interface Target {
  name: string;
  runtime: Runtime;
  api: ChatApi;
}

/** Turns whose events broke the rules; any count above 0 fails the run. */
export const integrity = {
  turnsChecked: 0,
  tokensLost: 0,
  tokensExtra: 0,
  turnsDuplicated: 0,
  turnsFailed: 0,
  /** Rejections unhandled at the end of their tick in a runtime process (each would have ended `npm start`). */
  runtimeUnhandledRejections: 0,
};
const children: BenchChild<unknown>[] = [];
export const realtimeClients: SessionEvents[] = [];

export function reply(words: number): string {
  return `Please reply with ${words} words.`;
}

let userCount = 0;
/** A fresh signed-in user (App Service authentication), so each session's Web PubSub traffic is its own. */
export function newUser(label: string): string {
  userCount += 1;
  return `bench-${RUN_ID}-${label}-${userCount}`;
}

export async function startChild<R>(file: string, label: string, options: unknown): Promise<BenchChild<R>> {
  const child = await BenchChild.start<R>(file, label, options);
  children.push(child);
  return child;
}

export async function stopChild(child: BenchChild<unknown>): Promise<void> {
  children.splice(children.indexOf(child), 1);
  await child.stop();
}

/** The app's settings for a runtime that calls the model process as any OpenAI-compatible endpoint. */
export function remoteModelSettings(model: ModelReady): Record<string, string> {
  return {
    LLM_PROVIDER: 'openai-compatible',
    LLM_BASE_URL: model.baseUrl,
    LLM_API_KEY: 'unused-by-the-offline-model',
    LLM_CHAT_MODEL: OFFLINE_CHAT_MODEL,
    LLM_EMBEDDING_MODEL: OFFLINE_EMBEDDING_MODEL,
    LLM_EMBEDDING_DIMENSIONS: String(EMBEDDING_DIMENSIONS),
  };
}

export async function startTarget(name: string, settings: Record<string, string>): Promise<Target> {
  const runtime = await startChild<RuntimeReady>('./runtime-process.ts', `runtime "${name}"`, {
    // Callers are App Service principals, so the bench can sign in as many users as it has sessions.
    settings: { AUTH_MODE: 'app-service', ...settings },
  });
  return { name, runtime, api: new ChatApi(runtime.ready.url) };
}

/** Stops a runtime, counting the failures nothing handled while it ran. */
export async function retire(target: Target): Promise<void> {
  integrity.runtimeUnhandledRejections += (await usage(target)).unhandledRejections;
  await stopChild(target.runtime);
}

export function idle(target: Target): Promise<void> {
  return withTimeout(target.runtime.call('idle'), BATCH_TIMEOUT_MS, `${target.name} going idle`);
}

export const usage = (target: Target) => target.runtime.call<RuntimeUsage>('usage');

export async function withTimeout<T>(work: Promise<T>, ms: number, label: string): Promise<T> {
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
export function check(trace: TurnTrace, expectedWords: number): boolean {
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
export function firstContentAfter(sentAt: number, trace: TurnTrace): number {
  return trace.firstContentAt === undefined ? Number.NaN : trace.firstContentAt - sentAt;
}

/** The distinct error events of some turns, the most frequent first (a few, for the report). */
export function errorSummary(traces: readonly TurnTrace[]): string[] {
  const counts = new Map<string, number>();
  for (const message of traces.flatMap((t) => t.errors)) counts.set(message, (counts.get(message) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([, a], [, b]) => b - a)
    .slice(0, 5)
    .map(([message, count]) => `${count}× ${message}`);
}

export function progress(step: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${step}`);
}
export async function stopAll(): Promise<void> {
  for (const client of realtimeClients.splice(0)) client.stop();
  for (const child of [...children].reverse()) await stopChild(child);
}

/** Whether no stream broke the rules so far: nothing lost, extra, duplicated or failed. */
export function integrityWhole(): boolean {
  return Object.entries(integrity).every(([key, value]) => key === 'turnsChecked' || value === 0);
}
