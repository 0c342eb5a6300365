// The Cosmos DB adapter of QuotaState (container `quotas`, partition userId): the turn leases are one document
// per user written on the version read (If-Match), the message counter a conditional patch (incr while below max).
import { setTimeout as delay } from 'node:timers/promises';
import type { Container } from '@azure/cosmos';
import { DependencyError } from '../../errors.js';
import { readItem } from '../../cosmos/adapters/cosmos-items.js';
import { conditionNumber, patchItem, writeOnVersion } from '../../cosmos/adapters/cosmos-patch.js';
import {
  messageWindowDocumentSchema,
  messageWindowId,
  TURN_LEASES_ID,
  turnLeasesDocumentSchema,
  type MessageWindowDocument,
  type TurnLease,
  type TurnLeasesDocument,
} from '../contracts.js';
import type { QuotaState } from '../quota-state.js';

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
    async takeTurnSlot({ userId, turn, max, leaseSeconds, now }) {
      for (let attempt = 0; attempt < LEASE_WRITE_ATTEMPTS; attempt += 1) {
        const read = await readLeases(userId);
        const live = (read?.resource.leases ?? []).filter(
          (lease) => Date.parse(lease.expiresAt) > now.getTime(),
        );
        if (live.some((lease) => lease.turn === turn)) return { taken: true, alreadyHeld: true };
        if (live.length >= max)
          return {
            taken: false,
            running: live.length,
            nextExpiry: new Date(Math.min(...live.map((lease) => Date.parse(lease.expiresAt)))),
          };
        const expiresAt = new Date(now.getTime() + leaseSeconds * 1000);
        const leases = [...live, { turn, expiresAt: expiresAt.toISOString() }];
        if ((await writeLeases(userId, leases, ttlFor(leases, now), read?.etag)) === 'done')
          return { taken: true };
        await backOff(attempt);
      }
      throw contended();
    },

    async releaseTurnSlot(userId, turn) {
      for (let attempt = 0; attempt < LEASE_WRITE_ATTEMPTS; attempt += 1) {
        const read = await readLeases(userId);
        if (read === undefined || !read.resource.leases.some((lease) => lease.turn === turn)) return;
        // Expired leases are left to the next take, which prunes them on its own clock.
        const leases = read.resource.leases.filter((lease) => lease.turn !== turn);
        if ((await writeLeases(userId, leases, ttlFor(leases, new Date()), read.etag)) === 'done') return;
        await backOff(attempt);
      }
      throw contended();
    },

    async countMessage(userId, window, max) {
      const id = messageWindowId(window.start);
      for (let attempt = 0; attempt < LEASE_WRITE_ATTEMPTS; attempt += 1) {
        const patched = await patchItem(
          container,
          id,
          userId,
          [{ op: 'incr', path: '/count', value: 1 }],
          `FROM c WHERE c.count < ${conditionNumber(max)}`,
          'the message counter',
        );
        if (patched === 'patched') return { counted: true };
        if (patched === 'unmet') {
          const read = await readItem(
            container,
            id,
            userId,
            'the message counter',
            messageWindowDocumentSchema,
          );
          return { counted: false, count: read?.resource.count ?? max };
        }
        // The window's first message creates its counter; a create that loses the race patches the winner's.
        const document: MessageWindowDocument = {
          id,
          kind: 'quota-message-window',
          userId,
          windowStart: window.start.toISOString(),
          count: 1,
          ttl: window.seconds * 2,
        };
        const created = await writeOnVersion(container, document, userId, undefined, 'the message counter');
        if (created !== 'conflict') return { counted: true };
      }
      throw contended();
    },

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
