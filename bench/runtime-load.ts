// The local runtime under a batch of sessions posting at once (default 100), for profiling it: added time to first
// token, CPU per turn (whole process and the app's own thread), event-loop use. RUNTIME_PROCESS=<path> runs
// another checkout's bench/runtime-process.ts (before/after); BENCH_CPU_PROF_DIR=<dir> writes CPU profiles.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mapBounded } from '../shared/bounded-parallel.js';
import { OFFLINE_CHAT_MODEL, OFFLINE_EMBEDDING_MODEL } from '../local/offline-model/offline-model.js';
import { BenchChild } from './child-process.js';
import { ChatApi, SessionEvents, TurnTrace } from './chat-clients.js';
import { cpuMsPer, percentiles, round, utilisation } from './figures.js';
import type { ModelReady } from './model-process.js';
import type { RuntimeReady, RuntimeUsage } from './runtime-process.js';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 2);
const MODEL_TTFT_MS = 300;
const RUNTIME_FILE = process.env.RUNTIME_PROCESS
  ? pathToFileURL(resolve(process.env.RUNTIME_PROCESS)).href
  : './runtime-process.ts';
const RUN = randomUUID().slice(0, 8);

/** Clock ticks of CPU (user + system) the process's main thread has used, from /proc (Linux only). */
function mainThreadCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 (1-based) of the whole line, 12 and 13 after "pid (comm) ".
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** The pid of this process's child whose command line names file. */
function childPid(file: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === process.pid && cmdline.includes(file)) return Number(entry);
    } catch {
      // The process ended meanwhile.
    }
  }
  throw new Error(`no child runs ${file}`);
}

const model = await BenchChild.start<ModelReady>('./model-process.ts', 'model', {
  ttftMs: MODEL_TTFT_MS,
  tokensPerSecond: 50,
  embeddingDimensions: 1536,
});
const runtime = await BenchChild.start<RuntimeReady>(RUNTIME_FILE, 'runtime', {
  settings: {
    AUTH_MODE: 'app-service',
    LLM_PROVIDER: 'openai-compatible',
    LLM_BASE_URL: model.ready.baseUrl,
    LLM_API_KEY: 'unused-by-the-offline-model',
    LLM_CHAT_MODEL: OFFLINE_CHAT_MODEL,
    LLM_EMBEDDING_MODEL: OFFLINE_EMBEDDING_MODEL,
    LLM_EMBEDDING_DIMENSIONS: '1536',
  },
});
const pid = childPid(RUNTIME_FILE.replace(/^file:\/\//, '').replace(/^\.\//, 'bench/'));
const api = new ChatApi(runtime.ready.url);
const usage = () => runtime.call<RuntimeUsage>('usage');
const idle = () => runtime.call('idle');

async function batch(label: string, n: number) {
  const sessions = await mapBounded(
    Array.from({ length: n }, (_, index) => index),
    25,
    async (index) => {
      const userId = `load-${RUN}-${label}-${index}`;
      const sessionId = await api.startSession(userId);
      const events = await SessionEvents.connect(api, userId, sessionId);
      const chatMessageId = randomUUID();
      return { userId, sessionId, chatMessageId, sse: new TurnTrace(), events, sentAt: 0 };
    },
  );
  await idle();
  const before = await usage();
  const threadBefore = mainThreadCpuMs(pid);
  await Promise.all(
    sessions.map(async (s) => {
      s.sentAt = performance.now();
      const url = await api.postChat(s.userId, s.sessionId, s.chatMessageId, 'Please reply with 20 words.');
      await api.readStream(s.userId, url, s.sse);
    }),
  );
  const streamed = await usage();
  await idle();
  const after = await usage();
  const threadAfter = mainThreadCpuMs(pid);
  for (const s of sessions) s.events.stop();
  const added = sessions.map((s) => (s.sse.firstContentAt ?? Number.NaN) - s.sentAt - MODEL_TTFT_MS);
  return {
    label,
    sessions: n,
    failed: sessions.filter((s) => s.sse.errors.length > 0 || s.sse.firstContentAt === undefined).length,
    addedTtftMs: percentiles(added),
    cpuMsPerTurn: cpuMsPer(before.cpu, after.cpu, n),
    appThreadCpuMsPerTurn: round((threadAfter - threadBefore) / n, 1),
    eventLoopUtilisation: utilisation(before.eventLoop, streamed.eventLoop),
    // Absent from a runtime-process.ts of before the server had a thread of its own.
    cosmosThreadCpuMsPerTurn:
      after.cosmosThread?.cpuMs === undefined || before.cosmosThread?.cpuMs === undefined
        ? undefined
        : round((after.cosmosThread.cpuMs - before.cosmosThread.cpuMs) / n, 1),
    cosmosThreadEventLoopUtilisation:
      streamed.cosmosThread?.eventLoop && before.cosmosThread?.eventLoop
        ? utilisation(before.cosmosThread.eventLoop, streamed.cosmosThread.eventLoop)
        : undefined,
    cosmosRequestsPerTurn: round(after.cosmos.requests / n, 1),
    cosmosTlsConnections:
      after.cosmosThread === undefined
        ? undefined
        : after.cosmosThread.connections - before.cosmosThread.connections,
    webPubSubRestCallsPerTurn: round(after.webPubSub.restCalls / n, 1),
    cosmosPerTurnByContainer: Object.fromEntries(
      Object.entries(after.cosmos.byContainer)
        .map(([key, entry]) => [key, round(entry.requests / n, 2)] as const)
        .filter(([, perTurn]) => perTurn >= 0.5)
        .sort(([, a], [, b]) => b - a),
    ),
  };
}

try {
  await batch('warmup', 10);
  for (let index = 0; index < BATCHES; index += 1) {
    await runtime.call('resetStats');
    console.log(JSON.stringify(await batch(`b${index}`, SESSIONS)));
  }
} finally {
  await runtime.stop();
  await model.stop();
}
