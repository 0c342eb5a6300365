// Contract tests of the Cosmos DB quota state against the local Cosmos DB with the real @azure/cosmos client: turn
// leases and message counters hold their limits under parallel writers (two clients, as two instances), leases
// expire, releases and take-backs, and users never share state.
import { randomUUID } from 'node:crypto';
import type { CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { createCosmosQuotaState } from '../../shared/quota/adapters/cosmos-quota-state.js';
import {
  QUOTAS_CONTAINER,
  TURN_LEASES_ID,
  turnLeasesDocumentSchema,
  type TurnLease,
} from '../../shared/quota/contracts.js';
import type { QuotaState, Reservation } from '../../shared/quota/quota-state.js';

let local: LocalCosmos;
const clients: CosmosClient[] = [];
/** Two adapters over two clients: what two instances of the app hold. */
let one: QuotaState;
let two: QuotaState;

beforeAll(async () => {
  local = await startLocalCosmos();
  clients.push(createLocalCosmosClient(local), createLocalCosmosClient(local));
  await provisionCosmos(clients[0]!, COSMOS_DATABASE, cosmosContainers);
  [one, two] = clients.map((client) =>
    createCosmosQuotaState(client.database(COSMOS_DATABASE).container(QUOTAS_CONTAINER)),
  ) as [QuotaState, QuotaState];
});

afterAll(async () => {
  for (const client of clients) client.dispose();
  await local?.stop();
});

/** The user's lease document as stored, read behind the adapter. */
async function leases(userId: string): Promise<TurnLease[]> {
  const container = clients[0]!.database(COSMOS_DATABASE).container(QUOTAS_CONTAINER);
  const { resource } = await container.item(TURN_LEASES_ID, userId).read();
  return resource === undefined ? [] : turnLeasesDocumentSchema.parse(resource).leases;
}

const user = () => `user_${randomUUID().slice(0, 8)}`;
const NOW = new Date('2026-11-26T10:15:20.000Z');

describe('turn slots', () => {
  it('ten parallel takes from two instances: exactly three win; a release frees one', async () => {
    const userId = user();
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        (n % 2 === 0 ? one : two).takeTurnSlot({
          userId,
          turn: `s${n}/m${n}`,
          max: 3,
          leaseSeconds: 900,
          now: NOW,
        }),
      ),
    );
    const won = outcomes.flatMap((outcome, n) => (outcome.taken ? [n] : []));
    expect(won).toHaveLength(3);
    for (const outcome of outcomes) if (!outcome.taken) expect(outcome).toMatchObject({ running: 3 });

    const loser = outcomes.findIndex((outcome) => !outcome.taken);
    const take = () =>
      two.takeTurnSlot({ userId, turn: `s${loser}/m${loser}`, max: 3, leaseSeconds: 900, now: NOW });
    expect(await take()).toMatchObject({ taken: false });
    await one.releaseTurnSlot(userId, `s${won[0]}/m${won[0]}`);
    expect(await take()).toEqual({ taken: true });
    // Taking a held slot again takes nothing more; releasing one not held changes nothing.
    expect(await take()).toEqual({ taken: true, alreadyHeld: true });
    await one.releaseTurnSlot(userId, 'never/taken');
    expect(
      await one.takeTurnSlot({ userId, turn: 'x/y', max: 3, leaseSeconds: 900, now: NOW }),
    ).toMatchObject({
      taken: false,
      running: 3,
    });
  });

  it('an expired lease frees its slot; the refusal says when the first lease runs out', async () => {
    const userId = user();
    expect(await one.takeTurnSlot({ userId, turn: 'a/1', max: 1, leaseSeconds: 60, now: NOW })).toEqual({
      taken: true,
    });
    const refused = await two.takeTurnSlot({ userId, turn: 'b/2', max: 1, leaseSeconds: 60, now: NOW });
    expect(refused).toEqual({ taken: false, running: 1, nextExpiry: new Date(NOW.getTime() + 60_000) });
    const later = new Date(NOW.getTime() + 61_000);
    expect(await two.takeTurnSlot({ userId, turn: 'b/2', max: 1, leaseSeconds: 60, now: later })).toEqual({
      taken: true,
    });
  });

  it("one user's slots are not another's", async () => {
    const [a, b] = [user(), user()];
    await one.takeTurnSlot({ userId: a, turn: 's/m', max: 1, leaseSeconds: 900, now: NOW });
    expect(await one.takeTurnSlot({ userId: b, turn: 's/m', max: 1, leaseSeconds: 900, now: NOW })).toEqual({
      taken: true,
    });
  });
});

describe('reservations', () => {
  const reserve = (tokens: number) => ({ tokens, costUsd: 0, bytes: 0 });
  /** Admits while what is used and reserved stays within `limit` (the gate's rule for a whole estimate). */
  const within = (limit: number, used: () => number, tokens: number) => (open: Reservation) =>
    used() + open.tokens + tokens > limit ? Promise.reject(new Error('over')) : Promise.resolve();

  it('ten parallel reservations from two instances: only what fits the limit is held', async () => {
    const userId = user();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, n) =>
        (n % 2 === 0 ? one : two).takeTurnSlot({
          userId,
          turn: `s${n}/m${n}`,
          max: 0,
          leaseSeconds: 900,
          now: NOW,
          reserve: reserve(700),
          check: within(2_000, () => 0, 700),
        }),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(2);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(8);
    // Taken without a limit of turns, the leases hold no slot.
    const read = await leases(userId);
    expect(read.map((lease) => lease.tokens)).toEqual([700, 700]);
    expect(read.every((lease) => lease.slot === false)).toBe(true);
  });

  it("a turn's end keeps its reservation settling, the next release drops it; a crashed turn's expires", async () => {
    const userId = user();
    // The release settles on the real clock: so do these takes.
    const start = new Date();
    const take = (turn: string, now = start) =>
      one.takeTurnSlot({
        userId,
        turn,
        max: 2,
        leaseSeconds: 60,
        now,
        reserve: reserve(1_000),
        check: within(1_000, () => 0, 1_000),
      });
    expect(await take('a/1')).toEqual({ taken: true });
    await expect(take('b/2')).rejects.toThrow('over');

    await two.releaseTurnSlot(userId, 'a/1', 120);
    const [settling] = await leases(userId);
    expect(settling).toMatchObject({ turn: 'a/1', tokens: 1_000, slot: false, settling: true });
    await expect(take('b/2')).rejects.toThrow('over');
    await two.releaseTurnSlot(userId, 'a/1', 120);
    expect(await leases(userId)).toEqual([]);

    // b/2's instance dies: nobody releases it, and its lease runs out.
    expect(await take('b/2')).toEqual({ taken: true });
    await expect(take('c/3')).rejects.toThrow('over');
    expect(await take('c/3', new Date(start.getTime() + 61_000))).toEqual({ taken: true });
  });
});

describe('open reservations', () => {
  it('adds up what the unexpired leases reserve, as another instance reads them', async () => {
    const userId = user();
    const take = (turn: string, tokens: number, costUsd: number, leaseSeconds: number) =>
      one.takeTurnSlot({
        userId,
        turn,
        max: 0,
        leaseSeconds,
        now: NOW,
        reserve: { tokens, costUsd, bytes: 0 },
      });
    expect(await two.openReservations(userId, NOW)).toEqual({ tokens: 0, costUsd: 0, bytes: 0 });
    await take('a/1', 700, 0.01, 900);
    await take('b/2', 300, 0.02, 60);
    expect(await two.openReservations(userId, NOW)).toEqual({ tokens: 1_000, costUsd: 0.03, bytes: 0 });
    // b/2's lease has run out a minute later: it holds nothing any more.
    const later = new Date(NOW.getTime() + 61_000);
    expect(await two.openReservations(userId, later)).toEqual({ tokens: 700, costUsd: 0.01, bytes: 0 });
    expect(await two.openReservations(user(), NOW)).toEqual({ tokens: 0, costUsd: 0, bytes: 0 });
  });
});

describe('message counters', () => {
  it('ten parallel messages from two instances: exactly three counted in the window; the next window is new', async () => {
    const userId = user();
    const window = { start: new Date('2026-11-26T10:15:00.000Z'), seconds: 60 };
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, n) => (n % 2 === 0 ? one : two).countMessage(userId, window, 3)),
    );
    expect(outcomes.filter((outcome) => outcome.counted)).toHaveLength(3);
    expect(outcomes.find((outcome) => !outcome.counted)).toEqual({ counted: false, count: 3 });

    await one.uncountMessage(userId, window.start);
    expect(await two.countMessage(userId, window, 3)).toEqual({ counted: true });
    expect(await two.countMessage(userId, window, 3)).toEqual({ counted: false, count: 3 });

    const next = { start: new Date('2026-11-26T10:16:00.000Z'), seconds: 60 };
    expect(await one.countMessage(userId, next, 3)).toEqual({ counted: true });
    expect(await one.countMessage(user(), window, 3)).toEqual({ counted: true });
  });
});
