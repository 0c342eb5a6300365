// The cost of one turn on each hot store, and with cost accounting off: the same conversation run with HOT_STORE=cosmos,
// USAGE_ACCOUNTING=off and HOT_STORE=redis, priced per 1,000 turns from the RU the local Cosmos DB server charges.
// `npm run bench:turn-cost` (TURNS=300 by default; BENCH_QUICK=1 runs 20). Asserts nothing.
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { startRedisServer, type TestRedisServer } from '../test/support/redis-server.js';
import { BenchChild } from './child-process.js';
import { ChatApi, SessionEvents } from './chat-clients.js';
import { round } from './figures.js';
import type { RuntimeReady, RuntimeUsage } from './runtime-process.js';
import { PRICES } from './turn-price.js';

const QUICK = process.env.BENCH_QUICK === '1';
const TURNS = Number(process.env.TURNS ?? (QUICK ? 20 : 300));
/** Turns averaged at each end, so one turn that folds the summary does not stand alone. */
const WINDOW = Math.max(1, Math.min(10, Math.floor(TURNS / 4)));
const REPLY_WORDS = 20;
const TURN_TIMEOUT_MS = 60_000;
const RESULTS_FILE = QUICK ? 'bench/results/turn-cost-quick.json' : 'bench/results/turn-cost.json';
const HOT_CONTAINER = 'hot-conversations';
const USAGE_CONTAINER = 'usage';

// ---- Azure prices (USD, pay-as-you-go; check the pricing pages for your region before relying on them) ----

/** Cosmos DB serverless bills consumed request units (the one price table is turn-price.ts). */
const COSMOS_SERVERLESS_USD_PER_MILLION_RU = PRICES.cosmosServerlessUsdPerMillionRu;
/**
 * Azure Managed Redis is provisioned: billed per hour whatever it serves. Balanced_B0 (0.5 GB, the smallest) is
 * taken at USD 0.034 an hour (about USD 25 a month); this figure was not checked against a live price sheet, so
 * REDIS_HOURLY_USD overrides it.
 */
const REDIS_HOURLY_USD = Number(process.env.REDIS_HOURLY_USD ?? 0.034);
const REDIS_B0_MEMORY_BYTES = 0.5 * 1024 ** 3;

// ---- one store's run ----

interface TurnFigures {
  turn: number;
  wallMs: number;
  cosmosRequests: number;
  cosmosHotRequests: number;
  cosmosBytes: number;
  cosmosHotBytes: number;
  /** Charged by the local Cosmos DB server (local/cosmos/request-charge.ts), in all and on the hot store. */
  cosmosRequestUnits: number;
  cosmosHotRequestUnits: number;
  redisCommands: number;
  redisByCommand: Record<string, number>;
  redisBytes: number;
  /** Requests to the usage container (records and counters), by operation. */
  usageRequests: number;
  usageByOperation: Record<string, number>;
}

interface RedisCounters {
  commands: Record<string, number>;
  inBytes: number;
  outBytes: number;
}

async function redisCounters(redis: TestRedisServer): Promise<RedisCounters> {
  const commandStats = await redis.command('INFO', 'commandstats');
  const stats = await redis.command('INFO', 'stats');
  const commands: Record<string, number> = {};
  for (const match of commandStats.matchAll(/cmdstat_([^:]+):calls=(\d+)/g))
    if (match[1] !== 'info') commands[match[1]!] = Number(match[2]);
  const number = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(stats)?.[1] ?? 0);
  return {
    commands,
    inBytes: number('total_net_input_bytes'),
    outBytes: number('total_net_output_bytes'),
  };
}

function redisDelta(before: RedisCounters, after: RedisCounters, overhead: number) {
  const byCommand: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after.commands)) {
    const delta = calls - (before.commands[name] ?? 0);
    if (delta > 0) byCommand[name] = delta;
  }
  const commands = Object.values(byCommand).reduce((sum, n) => sum + n, 0);
  const bytes = Math.max(0, after.inBytes - before.inBytes + after.outBytes - before.outBytes - overhead);
  return { commands, byCommand, bytes };
}

async function runStore(store: 'cosmos' | 'redis', redis: TestRedisServer, accounting = true) {
  const name = accounting ? store : `${store}, accounting off`;
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${name}: ${TURNS} turns`);
  const runtime = await BenchChild.start<RuntimeReady>('./runtime-process.ts', `runtime (${name})`, {
    settings: {
      OFFLINE_MODEL_TTFT_MS: '0',
      OFFLINE_MODEL_TOKENS_PER_SECOND: '0',
      HOT_STORE: store,
      USAGE_ACCOUNTING: accounting ? 'on' : 'off',
      ...(store === 'redis' ? { REDIS_URL: redis.url } : {}),
    },
  });
  const api = new ChatApi(runtime.ready.url);
  const idle = () => runtime.call('idle');
  const usage = () => runtime.call<RuntimeUsage>('usage');
  // A development identity of the local runtime; each store's runtime keeps its data in memory only.
  const userId = 'user_001';
  // One turn of another conversation first, so turn 1 does not pay for the process's warm-up.
  await api.postChat(userId, await api.startSession(userId), randomUUID(), reply());
  await idle();
  // What reading the counters itself costs in bytes (INFO's own replies), taken off each turn's figure.
  const calibration = await redisCounters(redis);
  const overhead = redisDelta(calibration, await redisCounters(redis), 0).bytes;

  const sessionId = await api.startSession(userId);
  const events = await SessionEvents.connect(api, userId, sessionId);
  const turns: TurnFigures[] = [];
  let hashBytes = 0;
  try {
    for (let turn = 1; turn <= TURNS; turn += 1) {
      await idle();
      await runtime.call('resetStats');
      const redisBefore = await redisCounters(redis);
      const startedAt = performance.now();
      const chatMessageId = randomUUID();
      const trace = events.trace(chatMessageId);
      await api.postChat(userId, sessionId, chatMessageId, reply());
      await trace.finished(TURN_TIMEOUT_MS, `${store} turn ${turn}`);
      if (trace.errors.length > 0)
        throw new Error(`${store} turn ${turn} failed: ${trace.errors.join('; ')}`);
      // The turn's background work (history, memory) belongs to its cost.
      await idle();
      const wallMs = performance.now() - startedAt;
      const cosmos = (await usage()).cosmos;
      const redisTurn = redisDelta(redisBefore, await redisCounters(redis), overhead);
      const hot = Object.entries(cosmos.byContainer).filter(([key]) => key.startsWith(`${HOT_CONTAINER} `));
      const accounted = Object.entries(cosmos.byContainer).filter(([key]) =>
        key.startsWith(`${USAGE_CONTAINER} `),
      );
      turns.push({
        turn,
        wallMs,
        cosmosRequests: cosmos.requests,
        cosmosHotRequests: hot.reduce((sum, [, entry]) => sum + entry.requests, 0),
        cosmosBytes: cosmos.requestBytes + cosmos.responseBytes,
        cosmosHotBytes: hot.reduce((sum, [, entry]) => sum + entry.bytes, 0),
        cosmosRequestUnits: cosmos.requestUnits,
        cosmosHotRequestUnits: hot.reduce((sum, [, entry]) => sum + entry.requestUnits, 0),
        redisCommands: redisTurn.commands,
        redisByCommand: redisTurn.byCommand,
        redisBytes: redisTurn.bytes,
        usageRequests: accounted.reduce((sum, [, entry]) => sum + entry.requests, 0),
        usageByOperation: Object.fromEntries(
          accounted.map(([key, entry]) => [key.slice(USAGE_CONTAINER.length + 1), entry.requests]),
        ),
      });
    }
    if (store === 'redis') {
      const reply = await redis.command('MEMORY', 'USAGE', `hot:{${sessionId}}`);
      hashBytes = Number(/^:(\d+)/.exec(reply)?.[1] ?? 0);
    }
  } finally {
    events.stop();
    await runtime.stop();
  }
  return { store: name, turns, sessionHashBytes: hashBytes };
}

function reply(): string {
  return `Please reply with ${REPLY_WORDS} words.`;
}

// ---- report ----

type Run = Awaited<ReturnType<typeof runStore>>;

function meanOf(turns: readonly TurnFigures[]) {
  const mean = (value: (t: TurnFigures) => number) =>
    turns.reduce((sum, t) => sum + value(t), 0) / Math.max(1, turns.length);
  return {
    wallMs: round(mean((t) => t.wallMs)),
    cosmosRequests: round(mean((t) => t.cosmosRequests)),
    cosmosHotRequests: round(mean((t) => t.cosmosHotRequests)),
    cosmosBytes: round(
      mean((t) => t.cosmosBytes),
      0,
    ),
    cosmosHotBytes: round(
      mean((t) => t.cosmosHotBytes),
      0,
    ),
    cosmosRequestUnits: round(mean((t) => t.cosmosRequestUnits)),
    redisCommands: round(mean((t) => t.redisCommands)),
    redisBytes: round(
      mean((t) => t.redisBytes),
      0,
    ),
    usageRequests: round(mean((t) => t.usageRequests)),
  };
}

function summarise(run: Run) {
  const first = meanOf(run.turns.slice(0, WINDOW));
  const last = meanOf(run.turns.slice(-WINDOW));
  const all = meanOf(run.turns);
  const cosmosUsdPer1000 = (all.cosmosRequestUnits * 1000 * COSMOS_SERVERLESS_USD_PER_MILLION_RU) / 1e6;
  const lastTurn = run.turns.at(-1);
  return {
    store: run.store,
    turn1: meanOf(run.turns.slice(0, 1)),
    [`turns1to${WINDOW}`]: first,
    [`turns${TURNS - WINDOW + 1}to${TURNS}`]: last,
    [`turn${TURNS}`]: meanOf(run.turns.slice(-1)),
    mean: all,
    redisCommandsAtLastTurn: lastTurn?.redisByCommand ?? {},
    usageRequestsAtLastTurn: lastTurn?.usageByOperation ?? {},
    sessionHashBytes: run.sessionHashBytes,
    cosmosUsdPer1000Turns: round(cosmosUsdPer1000, 4),
  };
}

async function main(): Promise<void> {
  const redis = await startRedisServer();
  const runs: Run[] = [];
  try {
    runs.push(await runStore('cosmos', redis));
    runs.push(await runStore('redis', redis));
    runs.push(await runStore('cosmos', redis, false));
  } finally {
    await redis.stop();
  }
  const [cosmos, onRedis, unaccounted] = runs.map(summarise);
  if (!cosmos || !onRedis || !unaccounted) throw new Error('a run is missing');
  // What recording every model call adds to a turn (its rounds and its background work), on the Cosmos hot store.
  const accounting = {
    on: cosmos.mean,
    off: unaccounted.mean,
    addedRequestsPerTurn: round(cosmos.mean.cosmosRequests - unaccounted.mean.cosmosRequests),
    addedBytesPerTurn: round(cosmos.mean.cosmosBytes - unaccounted.mean.cosmosBytes, 0),
    addedRequestUnitsPerTurn: round(cosmos.mean.cosmosRequestUnits - unaccounted.mean.cosmosRequestUnits),
    usageRequestsFirstTurns: (cosmos[`turns1to${WINDOW}`] as ReturnType<typeof meanOf>).usageRequests,
    usageRequestsLastTurns: (cosmos[`turns${TURNS - WINDOW + 1}to${TURNS}`] as ReturnType<typeof meanOf>)
      .usageRequests,
    usageRequestsAtLastTurn: cosmos.usageRequestsAtLastTurn,
  };

  // Redis' own commands per 1,000 turns, and what the instance costs whatever they are.
  const redisCommandsPer1000 = onRedis.mean.redisCommands * 1000;
  const hotRuPerTurn = hotRequestUnits(runs[0]!);
  const hotCosmosUsdPer1000 = (hotRuPerTurn * 1000 * COSMOS_SERVERLESS_USD_PER_MILLION_RU) / 1e6;
  const pricing = {
    cosmosServerlessUsdPerMillionRu: COSMOS_SERVERLESS_USD_PER_MILLION_RU,
    redisB0HourlyUsd: REDIS_HOURLY_USD,
    redisB0MonthlyUsd: round(REDIS_HOURLY_USD * 730, 2),
    /** The hot store's share of Cosmos DB's bill with HOT_STORE=cosmos, per 1,000 turns. */
    cosmosHotStoreUsdPer1000Turns: round(hotCosmosUsdPer1000, 4),
    cosmosHotStoreRuPerTurn: round(hotRuPerTurn, 1),
    /** Everything Cosmos DB bills per 1,000 turns on each store (with Redis, history and memory remain). */
    cosmosUsdPer1000Turns: { cosmos: cosmos.cosmosUsdPer1000Turns, redis: onRedis.cosmosUsdPer1000Turns },
    redisCommandsPer1000Turns: round(redisCommandsPer1000, 0),
    /** Turns an hour at which the B0's hourly price equals what the hot store would cost on Cosmos DB. */
    breakEvenTurnsPerHour: round((REDIS_HOURLY_USD / hotCosmosUsdPer1000) * 1000, 0),
    /** Sessions of TURNS turns a B0's memory holds at once (each session's hash lives a day after its last turn). */
    sessionsInB0Memory:
      onRedis.sessionHashBytes > 0 ? Math.floor(REDIS_B0_MEMORY_BYTES / onRedis.sessionHashBytes) : null,
  };
  const results = {
    quick: QUICK,
    turns: TURNS,
    window: WINDOW,
    replyWords: REPLY_WORDS,
    cosmos,
    redis: onRedis,
    cosmosWithoutAccounting: unaccounted,
    accounting,
    pricing,
  };
  print(results);
  await mkdir('bench/results', { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nWritten to ${RESULTS_FILE}`);
}

/** The request units the hot-conversations container took per turn on average (the Cosmos run). */
function hotRequestUnits(run: Run): number {
  return run.turns.reduce((sum, turn) => sum + turn.cosmosHotRequestUnits, 0) / Math.max(1, run.turns.length);
}

function print(results: {
  cosmos: ReturnType<typeof summarise>;
  redis: ReturnType<typeof summarise>;
  cosmosWithoutAccounting: ReturnType<typeof summarise>;
  accounting: Record<string, unknown>;
  pricing: Record<string, unknown>;
}): void {
  console.log(
    `\nOne conversation of ${TURNS} turns on each hot store (offline model at full speed; a turn is`,
  );
  console.log('measured from its POST until the runtime is idle again, history and memory work included)');
  const columns = [
    'store',
    'at',
    'wall ms',
    'cosmos req',
    'hot req',
    'cosmos B',
    'hot B',
    'RU',
    'redis cmd',
    'redis B',
    'usage req',
  ];
  console.log(columns.map((c) => c.padStart(13)).join(''));
  for (const summary of [results.cosmos, results.cosmosWithoutAccounting, results.redis]) {
    for (const at of ['turn1', `turns1to${WINDOW}`, `turn${TURNS}`, `turns${TURNS - WINDOW + 1}to${TURNS}`]) {
      const f = summary[at] as ReturnType<typeof meanOf>;
      const cells = [
        summary.store,
        at,
        f.wallMs,
        f.cosmosRequests,
        f.cosmosHotRequests,
        f.cosmosBytes,
        f.cosmosHotBytes,
        f.cosmosRequestUnits,
        f.redisCommands,
        f.redisBytes,
        f.usageRequests,
      ];
      console.log(cells.map((c) => String(c).padStart(13)).join(''));
    }
  }
  console.log(`\nRedis commands at turn ${TURNS}: ${JSON.stringify(results.redis.redisCommandsAtLastTurn)}`);
  console.log(`Cost accounting per turn (Cosmos hot store): ${JSON.stringify(results.accounting, null, 2)}`);
  console.log(`Azure prices per 1,000 turns: ${JSON.stringify(results.pricing, null, 2)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
