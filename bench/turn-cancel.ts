// What stopping a turn costs and how fast it acts, on the local runtime at a realistic pace, for a stop taken
// by the instance running the turn and by another. Asserts nothing about speed.  npm run bench:cancel
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import azureFunctions from '@azure/functions';
import { cancelTurnEndpoint } from '../functions/chat.js';
import { createLogHandler } from '../local/log.js';
import { startLocalRuntime, type LocalRuntime } from '../local/runtime.js';
import type { App } from '../shared/app/app.js';
import { CANCELLED_FINISH_REASON } from '../shared/chat/contracts/activities.js';
import type { CancelSignalStats } from '../shared/chat/cancellation/turn-cancel-signals.js';
import { httpHandler } from '../shared/http/endpoint.js';
import { isTerminalEvent } from '../shared/streaming/contracts.js';
import { answerText } from '../shared/streaming/turn-transcript.js';
import { ChatApi, SessionEvents, type TurnTrace } from './chat-clients.js';
import { percentiles, round, type Percentiles } from './figures.js';
import { secondInstance } from '../local/second-instance.js';

const RUNS = Number(process.env.RUNS ?? 10);
const POLL_MS = process.env.CHAT_CANCEL_POLL_MS ?? '1000';
const MODEL_TTFT_MS = 300;
const MODEL_TOKENS_PER_SECOND = 50;
/** About 8 s of text at the model's pace: every stop lands mid-answer. */
const LONG_ANSWER = 'reply with 400 words';
/** Turns left to run to their end, for the poll's cost per second of streaming. */
const NATURAL_TURNS = 4;
const NATURAL_ANSWER = 'reply with 150 words';
const TURN_TIMEOUT_MS = 60_000;
const RESULTS_FILE = 'bench/results/turn-cancel.json';
const RUN_ID = randomUUID().slice(0, 8);

const { HttpRequest, InvocationContext } = azureFunctions;

interface StopSample {
  /** Cancel request to the last content event, and to message-end, as the client received them (ms). */
  toLastContentMs: number;
  toEndMs: number;
  /** The cancel handler's own time to its 202 (ms). */
  answeredMs: number;
  /** Content events received after the request. */
  contentAfter: number;
}

interface PathResult {
  runs: number;
  toLastContentMs: Percentiles;
  toEndMs: Percentiles;
  answeredMs: Percentiles;
  meanContentEventsAfterRequest: number;
  /** Point reads of the stop record made while the sampled streams were open, and their streaming time. */
  polls: number;
  streamingSeconds: number;
  readsPerStreamingSecond: number | null;
  stoppedHere: number;
  stoppedByPoll: number;
}

const problems: string[] = [];

function newUser(label: string): string {
  return `bench-${RUN_ID}-${label}-${randomUUID().slice(0, 4)}`;
}

/** The cancel endpoint's handler over one app, called as the Functions host calls it. */
async function callCancel(app: App, userId: string, sessionId: string, chatMessageId: string) {
  const handler = httpHandler(cancelTurnEndpoint, () => Promise.resolve(app));
  const request = new HttpRequest({
    method: 'POST',
    url: `http://localhost:7071/api/chat/${sessionId}/${chatMessageId}/cancel`,
    headers: { 'x-ms-client-principal-id': userId },
    params: { sessionId, chatMessageId },
  });
  const context = new InvocationContext({
    invocationId: randomUUID(),
    functionName: cancelTurnEndpoint.name,
  });
  const response = await handler(request, context);
  return response.status ?? 200;
}

/** The turn's log must hold one terminal event, and its text must be the committed answer. */
async function checkTurn(
  runtime: LocalRuntime,
  userId: string,
  sessionId: string,
  id: string,
  trace: TurnTrace,
) {
  const events = await runtime.app.streaming.turnEvents.read(sessionId, id, 0);
  const terminals = events.filter(isTerminalEvent);
  if (terminals.length !== 1) problems.push(`${id}: ${terminals.length} terminal events`);
  const memory = await runtime.app.chat.turn.workingMemory.load(userId, sessionId);
  const committed = memory.messages.find((m) => m.messageId === `${id}_assistant`);
  if (committed?.content !== answerText(events)) problems.push(`${id}: committed answer ≠ the log's text`);
  if (trace.text !== committed?.content) problems.push(`${id}: the client's text ≠ the committed answer`);
  return committed?.finishReason;
}

async function stopRuns(
  runtime: LocalRuntime,
  api: ChatApi,
  label: string,
  takenBy: App,
): Promise<PathResult> {
  const samples: StopSample[] = [];
  const before = runtime.app.chat.cancellations.stats();
  for (let run = 0; run < RUNS; run++) {
    const userId = newUser(label);
    const sessionId = await api.startSession(userId);
    const events = await SessionEvents.connect(api, userId, sessionId);
    try {
      const id = randomUUID();
      const trace = events.trace(id);
      await api.postChat(userId, sessionId, id, LONG_ANSWER);
      while (trace.firstContentAt === undefined) await sleep(5);
      // Somewhere in the first seconds of text, away from any poll's phase.
      await sleep(500 + ((run * 337) % 1500));
      const contentBefore = trace.contentEvents;
      const requestedAt = performance.now();
      const status = await callCancel(takenBy, userId, sessionId, id);
      const answeredMs = performance.now() - requestedAt;
      if (status !== 202) problems.push(`${label} run ${run}: the cancel answered ${status}`);
      await trace.finished(TURN_TIMEOUT_MS, `${label} run ${run}`);
      const finishReason = await checkTurn(runtime, userId, sessionId, id, trace);
      if (finishReason !== CANCELLED_FINISH_REASON)
        problems.push(`${label} run ${run}: finished ${finishReason ?? 'without an answer'}, not cancelled`);
      const lastContentAt = Math.max(...trace.wordArrivals);
      samples.push({
        // No content after the request: the text stopped at once (0), not before it was asked to.
        toLastContentMs: Math.max(0, lastContentAt - requestedAt),
        toEndMs: (trace.endedAt ?? Number.NaN) - requestedAt,
        answeredMs,
        contentAfter: trace.contentEvents - contentBefore,
      });
    } finally {
      events.stop();
    }
  }
  return summarise(samples, before, runtime.app.chat.cancellations.stats());
}

function summarise(samples: StopSample[], before: CancelSignalStats, after: CancelSignalStats): PathResult {
  const polls = after.polls - before.polls;
  const streamingSeconds = (after.watchedMs - before.watchedMs) / 1000;
  return {
    runs: samples.length,
    toLastContentMs: percentiles(samples.map((s) => s.toLastContentMs)),
    toEndMs: percentiles(samples.map((s) => s.toEndMs)),
    answeredMs: percentiles(samples.map((s) => s.answeredMs)),
    meanContentEventsAfterRequest: round(
      samples.reduce((sum, s) => sum + s.contentAfter, 0) / Math.max(1, samples.length),
    ),
    polls,
    streamingSeconds: round(streamingSeconds),
    readsPerStreamingSecond: streamingSeconds > 0 ? round(polls / streamingSeconds, 2) : null,
    stoppedHere: after.stoppedHere - before.stoppedHere,
    stoppedByPoll: after.stoppedByPoll - before.stoppedByPoll,
  };
}

/** Turns that run to their end: what watching for a stop costs when nobody stops anything. */
async function naturalRuns(runtime: LocalRuntime, api: ChatApi) {
  const before = runtime.app.chat.cancellations.stats();
  for (let run = 0; run < NATURAL_TURNS; run++) {
    const userId = newUser('natural');
    const sessionId = await api.startSession(userId);
    const events = await SessionEvents.connect(api, userId, sessionId);
    try {
      const id = randomUUID();
      const trace = events.trace(id);
      await api.postChat(userId, sessionId, id, NATURAL_ANSWER);
      await trace.finished(TURN_TIMEOUT_MS, `natural run ${run}`);
      const finishReason = await checkTurn(runtime, userId, sessionId, id, trace);
      if (finishReason !== 'stop') problems.push(`natural run ${run}: finished ${finishReason ?? '-'}`);
    } finally {
      events.stop();
    }
  }
  const after = runtime.app.chat.cancellations.stats();
  const polls = after.polls - before.polls;
  const streamingSeconds = (after.watchedMs - before.watchedMs) / 1000;
  return {
    turns: NATURAL_TURNS,
    polls,
    streamingSeconds: round(streamingSeconds),
    readsPerStreamingSecond: streamingSeconds > 0 ? round(polls / streamingSeconds, 2) : null,
  };
}

const runtime = await startLocalRuntime({
  port: 0,
  dataDir: undefined,
  settings: {
    AUTH_MODE: 'app-service',
    OFFLINE_MODEL_TTFT_MS: String(MODEL_TTFT_MS),
    OFFLINE_MODEL_TOKENS_PER_SECOND: String(MODEL_TOKENS_PER_SECOND),
    CHAT_CANCEL_POLL_MS: POLL_MS,
  },
  logHandler: createLogHandler('error'),
});
// The other instance: its own composition (its own in-process signals) over the same Cosmos DB, broker and driver.
const other = secondInstance(runtime);
const api = new ChatApi(runtime.url);
try {
  const natural = await naturalRuns(runtime, api);
  const inProcess = await stopRuns(runtime, api, 'in-process', runtime.app);
  const crossInstance = await stopRuns(runtime, api, 'cross-instance', other);
  const report = {
    pollIntervalMs: Number(POLL_MS),
    model: { ttftMs: MODEL_TTFT_MS, tokensPerSecond: MODEL_TOKENS_PER_SECOND },
    coalescing: {
      flushIntervalMs: runtime.config.streaming.flushIntervalMs,
      flushMaxChars: runtime.config.streaming.flushMaxChars,
    },
    inProcess,
    crossInstance,
    natural,
    problems,
  };
  console.log(JSON.stringify(report, null, 2));
  await mkdir('bench/results', { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nWritten to ${RESULTS_FILE}`);
} finally {
  await other.close();
  await runtime.stop();
}
if (problems.length > 0) {
  console.error(`${problems.length} stopped turn(s) broke the rules:\n${problems.join('\n')}`);
  process.exit(1);
}
