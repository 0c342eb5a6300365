// The parkTurn and resumeTurn activities: a turn that waits for its user's yes holds nothing meanwhile (its quota
// slot is given back and its session is marked so the next message denies the wait); resuming takes a slot again.
import type { PostedMessageStore } from '../../conversation/posted-message-store.js';
import type { SessionStore } from '../../conversation/session-store.js';
import { releaseTurn, retakeTurnSlot, type QuotaServices } from '../../quota/quota-gate.js';
import type { ParkTurnInput, ParkTurnOutput, ResumeTurnOutput } from '../contracts/activities.js';
import type { TurnStateStore } from '../turn-state-store.js';

export interface ParkServices {
  turns: Pick<TurnStateStore, 'markParked'>;
  quota?: Pick<QuotaServices, 'config' | 'state' | 'now'> | undefined;
  /** The session's approvals mark, which the front door reads with every post (absent: no mark, no look). */
  approvalMarks?: ApprovalMarks | undefined;
}

/** Where parking marks the session and looks for a later post. */
export interface ApprovalMarks {
  sessions: Pick<SessionStore, 'markApprovals'>;
  posted: Pick<PostedMessageStore, 'latest'>;
}

/**
 * Marks the session first, then looks for a message posted after the turn's: a post before the mark carried no
 * `mayPark` (its worker will not look for this turn), so the turn does not park but takes it as moved on; a post
 * after it reads the mark and denies the wait itself. Run again, it does the same: the marks are rewritten and a
 * slot already given back is not held.
 */
export async function parkTurn(services: ParkServices, input: ParkTurnInput): Promise<ParkTurnOutput> {
  const marks = services.approvalMarks;
  if (marks !== undefined) {
    await marks.sessions.markApprovals(input.userId, input.sessionId);
    const [latest] = await marks.posted.latest(input.userId, input.sessionId, 1);
    if (latest !== undefined && latest.chatMessageId !== input.chatMessageId) return { movedOn: true };
  }
  await Promise.all([
    services.turns.markParked(input),
    services.quota === undefined ? undefined : releaseTurn(services.quota, input),
  ]);
  return {};
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
