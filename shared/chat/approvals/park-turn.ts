// The parkTurn and resumeTurn activities: a turn that waits for its user's yes holds nothing meanwhile (its quota
// slot is given back and its session is marked so the next message denies the wait); resuming takes a slot again.
import { releaseTurn, retakeTurnSlot, type QuotaServices } from '../../quota/quota-gate.js';
import type { ParkTurnInput, ResumeTurnOutput } from '../contracts/activities.js';
import type { TurnStateStore } from '../turn-state-store.js';

export interface ParkServices {
  turns: Pick<TurnStateStore, 'markParked'>;
  quota?: Pick<QuotaServices, 'config' | 'state' | 'now'> | undefined;
}

/** Run again, it does the same: the mark is rewritten and a slot already given back is not held. */
export async function parkTurn(services: ParkServices, input: ParkTurnInput): Promise<void> {
  await Promise.all([
    services.turns.markParked(input),
    services.quota === undefined ? undefined : releaseTurn(services.quota, input),
  ]);
}

/**
 * Takes the turn's slot again; when none is free, says how long to wait before asking again (the orchestration
 * waits on a timer, at no cost, so an approved call never fails for want of a slot).
 */
export async function resumeTurn(services: ParkServices, input: ParkTurnInput): Promise<ResumeTurnOutput> {
  if (services.quota === undefined) return {};
  const retryAfterSeconds = await retakeTurnSlot(services.quota, input);
  return retryAfterSeconds === undefined ? {} : { retryAfterSeconds };
}
