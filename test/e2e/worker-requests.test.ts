// What a turn's background work costs in Cosmos DB requests, end to end on the local runtime: the history and memory
// workers' reads and writes and the usage records of their jobs, counted once the turn itself has finished (the
// workers are held until then). The bounds are the figures reached.
import type { InvocationContext } from '@azure/functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalCosmosStats } from '../../local/cosmos/local-cosmos.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { ChatClient, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';

const WORKERS = ['historyWorker', 'memoryWorker'];

/** Holds the workers' deliveries at their start until released; says when all of them have arrived. */
class WorkerHold {
  #arrived = 0;
  #release!: () => void;
  #allArrived!: () => void;
  readonly released = new Promise<void>((resolve) => (this.#release = resolve));
  readonly reached = new Promise<void>((resolve) => (this.#allArrived = resolve));
  arrive(): Promise<void> {
    this.#arrived += 1;
    if (this.#arrived === WORKERS.length) this.#allArrived();
    return this.released;
  }
  release(): void {
    this.#release();
  }
}

let hold: WorkerHold | undefined;

function held(definition: FunctionDefinition): FunctionDefinition {
  if (definition.kind !== 'serviceBus' || !WORKERS.includes(definition.name)) return definition;
  const { handler } = definition;
  return {
    ...definition,
    handler: async (message: unknown, context: InvocationContext) => {
      await hold?.arrive();
      await handler(message, context);
    },
  };
}

/** Requests by `container operation`, and the total. */
function requestsOf(stats: LocalCosmosStats): { total: number; by: Record<string, number> } {
  const by = Object.fromEntries(
    Object.entries(stats.byContainer).map(([key, entry]) => [key, entry.requests]),
  );
  return { total: stats.requests, by };
}

const sum = (by: Record<string, number>, prefix: string) =>
  Object.entries(by).reduce((total, [key, n]) => total + (key.startsWith(prefix) ? n : 0), 0);

describe("a turn's background requests", () => {
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let live: RealtimeListener;
  let sessionId: string;

  beforeAll(async () => {
    runtime = await startTestRuntime({ functions: functionDefinitions.map(held) });
    alice = new ChatClient(runtime.url, 'user_001');
    live = await alice.listen();
    sessionId = await alice.startSession();
  }, 60_000);

  afterAll(async () => {
    hold?.release();
    live?.stop();
    await runtime?.stop();
  });

  /** Runs a turn, then counts only what its history and memory workers do once it is over. */
  async function backgroundOfTurn(text: string) {
    hold = new WorkerHold();
    const chatMessageId = await alice.send(sessionId, text);
    await live.waitForTerminal(chatMessageId, 30_000);
    await hold.reached;
    await runtime.durable.idle();
    runtime.cosmos.resetStats();
    hold.release();
    await settle(runtime);
    hold = undefined;
    return requestsOf(runtime.cosmos.stats());
  }

  it('stays within the figures reached, from the first turn of a conversation on', async () => {
    const first = await backgroundOfTurn('Please reply with 20 words. I love sailing.');
    const later = [
      await backgroundOfTurn('Please reply with 20 words about boats.'),
      await backgroundOfTurn('Please reply with 20 words about the sea.'),
    ];
    for (const [n, turn] of [first, ...later].entries()) {
      const label = `turn ${n + 1}: ${JSON.stringify(turn.by)}`;
      // One batch per worker, both into the turn's one record: the history worker's also holds the turn's round,
      // handed on by its announcement. A record and its counters (its month's, with the day's tokens, and its
      // conversation's) are one batch; the first of a conversation also creates its counter in a retry, and the
      // second worker to write folds into the record the first created in a retry.
      expect(sum(turn.by, 'usage '), label).toBeLessThanOrEqual(n === 0 ? 5 : 3);
      // The conversation's tombstone: once, by the memory worker after its writes; the history worker's check rides
      // on its header record.
      expect(turn.by['sessions item.read'] ?? 0, label).toBeLessThanOrEqual(1);
      // A turn's messages and its exchange's index entry are one batch (the opening turn also keeps its system prompt
      // beside them).
      expect(turn.by['conversation-messages item.create'] ?? 0, label).toBeLessThanOrEqual(n === 0 ? 1 : 0);
      expect(turn.by['conversation-messages item.upsert'] ?? 0, label).toBe(0);
      expect(turn.by['conversation-messages item.batch'] ?? 0, label).toBe(1);
      // The active profile facts: one point read of their copy, and no query (a query and its plan only for a user
      // whose copy is made on their first turn). A first delivery does not look for the turn's record.
      expect(sum(turn.by, 'profile-facts item.query'), label).toBeLessThanOrEqual(n === 0 ? 2 : 0);
      expect(turn.by['profile-facts item.read'] ?? 0, label).toBeLessThanOrEqual(n === 0 ? 2 : 1);
      // The opening turn also reads each container's metadata once, creates the summary and its first fact; a
      // later one may title the conversation. A user's first consolidation also makes the copy of their active
      // facts (a read that finds none, the query, the copy's create).
      expect(turn.total, label).toBeLessThanOrEqual(n === 0 ? 24 : 13);
    }
  }, 120_000);
});
