// The chat worker's side of a turn that waits for its user's yes: the worker lets the session go once the turn
// parks, and the session's next message denies that wait ("the user moved on") and is answered after the turn.
import {
  isFinishedStatus,
  OrchestrationWaitTimeout,
  type OrchestrationClient,
} from '../../durable/orchestration-client.js';
import type { Logger } from '../../logger.js';
import { turnInstanceId } from '../../conversation/turn-ids.js';
import type { TurnEventStore } from '../../streaming/turn-event-store.js';
import { denyPendingApprovals } from '../approvals/answer-approval.js';
import { AWAITING_APPROVAL, MOVED_ON_REASON } from '../contracts/activities.js';
import type { QueuedChatMessage } from '../contracts/queue.js';
import type { TurnStateStore } from '../turn-state-store.js';

/** How often a waiting worker looks whether its turn parked (a park is seen at most this late). */
export const PARK_POLL_MS = 500;

/** What a turn posted after one that waited for its user's yes is told about it. */
export { MOVED_ON_REASON };

export interface ParkedTurnServices {
  orchestrations: OrchestrationClient;
  turns: Pick<TurnStateStore, 'recordApprovalAnswer'>;
  events: Pick<TurnEventStore, 'read'>;
}

/** Whether an orchestration's custom status says it waits for its user's yes. */
export function isParked(customStatus: unknown): boolean {
  return (
    typeof customStatus === 'object' &&
    customStatus !== null &&
    (customStatus as { status?: unknown }).status === AWAITING_APPROVAL
  );
}

/**
 * Waits until the turn has ended (`ended`) or waits for its user's yes (`parked`); rejects with
 * OrchestrationWaitTimeout after `timeoutMs`, as waitForCompletion does.
 */
export async function waitForEndOrPark(
  orchestrations: OrchestrationClient,
  instanceId: string,
  timeoutMs: number,
  pollMs = PARK_POLL_MS,
): Promise<'ended' | 'parked'> {
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const parked = new Promise<'parked'>((resolve, reject) => {
    const look = () => {
      timer = setTimeout(() => {
        orchestrations.getStatus(instanceId).then((status) => {
          if (done) return;
          if (
            status !== undefined &&
            !isFinishedStatus(status.runtimeStatus) &&
            isParked(status.customStatus)
          )
            resolve('parked');
          else look();
        }, reject);
      }, pollMs);
    };
    look();
  });
  try {
    return await Promise.race([
      orchestrations.waitForCompletion(instanceId, timeoutMs).then(() => 'ended' as const),
      parked,
    ]);
  } finally {
    done = true;
    clearTimeout(timer);
  }
}

/**
 * Before a message of the session is answered: the session's earlier turn that waited for its user's yes (`parkedId`,
 * read with TurnStateStore.parkedTurn), if it has
 * not ended) has its waiting approvals denied, and is waited for, so the new message sees how it ended. A turn that
 * parks again is denied again; one still running after `waitMs` is left to go on.
 */
export async function moveOnFromParkedTurn(
  services: ParkedTurnServices,
  message: Pick<QueuedChatMessage, 'userId' | 'sessionId' | 'chatMessageId'>,
  parkedId: string | undefined,
  waitMs: number,
  log: Pick<Logger, 'log' | 'warn'>,
): Promise<void> {
  if (parkedId === undefined || parkedId === message.chatMessageId) return;
  const instanceId = turnInstanceId(message.sessionId, parkedId);
  const turn = { userId: message.userId, sessionId: message.sessionId, chatMessageId: parkedId };
  const deadline = Date.now() + waitMs;
  for (;;) {
    const status = await services.orchestrations.getStatus(instanceId);
    if (status === undefined || isFinishedStatus(status.runtimeStatus)) return;
    const denied = await denyPendingApprovals(services, turn, MOVED_ON_REASON);
    if (denied > 0) log.log(`Turn ${instanceId}: ${denied} approval(s) denied, the user moved on.`);
    const left = deadline - Date.now();
    try {
      if (left <= 0) throw new OrchestrationWaitTimeout(instanceId, waitMs);
      if ((await waitForEndOrPark(services.orchestrations, instanceId, left)) === 'ended') return;
    } catch (error) {
      if (!(error instanceof OrchestrationWaitTimeout)) throw error;
      log.warn(`Turn ${instanceId} still running after ${waitMs} ms: answering the next message anyway.`);
      return;
    }
  }
}
