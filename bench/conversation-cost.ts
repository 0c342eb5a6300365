// (3) of the chat pipeline bench: what one turn costs along one long conversation (Cosmos DB requests and bytes,
// Web PubSub sends, durable replays, CPU, Azure's price), background work included, at sampled turns.
import { randomUUID } from 'node:crypto';
import { SessionEvents } from './chat-clients.js';
import { cpuMsPer, ratio, round } from './figures.js';
import {
  check,
  idle,
  newUser,
  PLAN,
  realtimeClients,
  reply,
  REPLY_WORDS,
  TURN_TIMEOUT_MS,
  usage,
  type Target,
} from './pipeline-harness.js';
import type { RuntimeUsage } from './runtime-process.js';
import { meanPrice, readTaskHubPolling, turnBill, turnPrice, type TurnPrice } from './turn-price.js';

/** Turns averaged at each end of the long conversation, so a turn that folds the summary does not stand alone. */
const TURN_COST_WINDOW = 10;

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

export async function measureTurnCost(target: Target) {
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
      price: turnPrice(turnBill(after.stats)),
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
