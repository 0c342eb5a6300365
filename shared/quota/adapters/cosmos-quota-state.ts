// The Cosmos DB adapter of QuotaState (container `quotas`, partition userId): the turn leases are one document
// per user written on the version read (If-Match), the message counter a window counter (cosmos-window-counter.ts).
import { setTimeout as delay } from 'node:timers/promises';
import type { Container } from '@azure/cosmos';
import { DependencyError } from '../../errors.js';
import { readItem } from '../../cosmos/adapters/cosmos-items.js';
import { patchItem, writeOnVersion } from '../../cosmos/adapters/cosmos-patch.js';
import {
  messageWindowDocumentSchema,
  messageWindowId,
  TURN_LEASES_ID,
  turnLeasesDocumentSchema,
  type TurnLease,
  type TurnLeasesDocument,
} from '../contracts.js';
import type { QuotaState, Reservation } from '../quota-state.js';
import { countInWindow } from './cosmos-window-counter.js';

const MESSAGES = {
  id: messageWindowId,
  kind: 'quota-message-window',
  schema: messageWindowDocumentSchema,
  what: 'the message counter',
} as const;

/**
 * Writes tried before giving up on a user's lease document. Each conflict means another request of the same user
 * won; a burst of N parallel posts settles in N rounds at most.
 */
const LEASE_WRITE_ATTEMPTS = 32;
/** A lease document outlives its last lease by this much, then expires by itself. */
const LEASES_TTL_MARGIN_SECONDS = 60;

export function createCosmosQuotaState(container: Container): QuotaState {
  const readLeases = (userId: string) =>
    readItem(container, TURN_LEASES_ID, userId, 'the turn leases', turnLeasesDocumentSchema);

  /** Rewrites the user's lease document on the version read; 'done' or 'conflict'. */
  async function writeLeases(
    userId: string,
    leases: TurnLease[],
    ttlSeconds: number,
    version: string | undefined,
  ): Promise<'done' | 'conflict'> {
    const document: TurnLeasesDocument = {
      id: TURN_LEASES_ID,
      kind: 'quota-turn-leases',
      userId,
      leases,
      ttl: ttlSeconds,
    };
    const written = await writeOnVersion(container, document, userId, version, 'the turn leases');
    return written === 'conflict' ? 'conflict' : 'done';
  }

  return {
    async takeTurnSlot({ userId, turn, max, leaseSeconds, now, reserve, check }) {
      for (let attempt = 0; attempt < LEASE_WRITE_ATTEMPTS; attempt += 1) {
        const read = await readLeases(userId);
        const live = (read?.resource.leases ?? []).filter(
          (lease) => Date.parse(lease.expiresAt) > now.getTime(),
        );
        if (live.some((lease) => lease.turn === turn)) return { taken: true, alreadyHeld: true };
        const slots = live.filter(holdsSlot);
        if (max > 0 && slots.length >= max)
          return {
            taken: false,
            running: slots.length,
            nextExpiry: new Date(Math.min(...slots.map((lease) => Date.parse(lease.expiresAt)))),
          };
        // Read after the leases: a turn settled meanwhile changed the document, so this write then conflicts.
        await check?.(
          reservedBy(live),
          live.map((lease) => ({ turn: lease.turn, bytes: lease.bytes ?? 0 })),
        );
        const expiresAt = new Date(now.getTime() + leaseSeconds * 1000);
        const lease: TurnLease = {
          turn,
          expiresAt: expiresAt.toISOString(),
          ...(max > 0 ? {} : { slot: false }),
          ...reservationFields(reserve),
        };
        const leases = [...live, lease];
        if ((await writeLeases(userId, leases, ttlFor(leases, now), read?.etag)) === 'done')
          return { taken: true };
        await backOff(attempt);
      }
      throw contended();
    },

    async releaseTurnSlot(userId, turn, settleSeconds) {
      for (let attempt = 0; attempt < LEASE_WRITE_ATTEMPTS; attempt += 1) {
        const read = await readLeases(userId);
        const held = read?.resource.leases.find((lease) => lease.turn === turn);
        if (read === undefined || held === undefined) return;
        const now = new Date();
        // Expired leases are left to the next take, which prunes them on its own clock.
        const others = read.resource.leases.filter((lease) => lease.turn !== turn);
        const settling = settleSeconds !== undefined ? settlingOf(held, now, settleSeconds) : undefined;
        const leases = settling ? [...others, settling] : others;
        if ((await writeLeases(userId, leases, ttlFor(leases, now), read.etag)) === 'done') return;
        await backOff(attempt);
      }
      throw contended();
    },

    async openReservations(userId, now) {
      const read = await readLeases(userId);
      return reservedBy(
        (read?.resource.leases ?? []).filter((lease) => Date.parse(lease.expiresAt) > now.getTime()),
      );
    },

    countMessage: (userId, window, max) => countInWindow(container, MESSAGES, userId, window, max),

    async uncountMessage(userId, windowStart) {
      await patchItem(
        container,
        messageWindowId(windowStart),
        userId,
        [{ op: 'incr', path: '/count', value: -1 }],
        'FROM c WHERE c.count > 0',
        'the message counter',
      );
    },
  };
}

/** A slot is held by every lease but an upload's and a settling one (leases written before `slot` hold one). */
function holdsSlot(lease: TurnLease): boolean {
  return lease.slot !== false && lease.settling !== true;
}

/** What the leases reserve of the spend limits, added up. */
function reservedBy(leases: readonly TurnLease[]): Reservation {
  return leases.reduce(
    (sum, lease) => ({
      tokens: sum.tokens + (lease.tokens ?? 0),
      costUsd: sum.costUsd + (lease.costUsd ?? 0),
      bytes: sum.bytes + (lease.bytes ?? 0),
    }),
    { tokens: 0, costUsd: 0, bytes: 0 },
  );
}

function reservationFields(reserve: Reservation | undefined): Partial<TurnLease> {
  if (reserve === undefined) return {};
  return {
    ...(reserve.tokens > 0 ? { tokens: reserve.tokens } : {}),
    ...(reserve.costUsd > 0 ? { costUsd: reserve.costUsd } : {}),
    ...(reserve.bytes > 0 ? { bytes: reserve.bytes } : {}),
  };
}

/**
 * A lease whose work ended keeps the tokens and cost it reserved, and no slot, until its usage is recorded (the next
 * release drops it) or `settleSeconds` pass; its bytes are stored by then, and counted there. Undefined: dropped.
 */
function settlingOf(lease: TurnLease, now: Date, settleSeconds: number): TurnLease | undefined {
  if (lease.settling === true || ((lease.tokens ?? 0) === 0 && (lease.costUsd ?? 0) === 0)) return undefined;
  const { bytes: _bytes, ...kept } = lease;
  const until = Math.min(Date.parse(lease.expiresAt), now.getTime() + settleSeconds * 1000);
  return { ...kept, slot: false, settling: true, expiresAt: new Date(until).toISOString() };
}

/** The document lives as long as its longest lease, and a little more. */
function ttlFor(leases: readonly TurnLease[], now: Date): number {
  const last = Math.max(now.getTime(), ...leases.map((lease) => Date.parse(lease.expiresAt)));
  return Math.ceil((last - now.getTime()) / 1000) + LEASES_TTL_MARGIN_SECONDS;
}

/** A short random pause, so the writers of a burst do not collide again in lockstep. */
function backOff(attempt: number): Promise<void> {
  return delay(Math.random() * Math.min(50, 5 * (attempt + 1)));
}

function contended(): DependencyError {
  return new DependencyError(
    'cosmos',
    'Too many requests of this user changed their quota state at once; try again.',
  );
}
