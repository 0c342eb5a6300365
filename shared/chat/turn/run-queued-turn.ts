// The chat worker's use-case: start the chatTurn orchestration of a queued message, then hold the message (and
// with it the Service Bus session) until the turn has finished, so the session's next message is answered after
// it and sees it.
import {
  OrchestrationWaitTimeout,
  isFinishedStatus,
  type OrchestrationClient,
} from '../../durable/orchestration-client.js';
import { ConflictError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { releaseTurn, type QuotaServices } from '../../quota/quota-gate.js';
import { CHAT_TURN_ORCHESTRATION, type ChatTurnInput } from '../contracts/activities.js';
import { turnInstanceId } from '../../conversation/turn-ids.js';
import type { QueuedChatMessage } from '../contracts/queue.js';
import type { SessionStore } from '../../conversation/session-store.js';
import { currentTraceCarrier } from '../../telemetry/propagation.js';

export interface RunQueuedTurnOptions {
  maxToolRounds: number;
  /** How long to hold the session for a running turn before letting the next message through. */
  waitMs: number;
}

export type QueuedTurnOutcome = 'started' | 'already-finished' | 'already-running' | 'session-deleted';

export interface QueuedTurnServices {
  orchestrations: OrchestrationClient;
  /** Finds no session once its conversation is being deleted. */
  sessions: Pick<SessionStore, 'find'>;
  /** Frees the turn's QUOTA_CONCURRENT_TURNS slot once it has ended (or will never start). */
  quota?: Pick<QuotaServices, 'config' | 'state'>;
}

/**
 * A redelivered or re-posted message finds its instance and never starts a second turn. A message whose conversation
 * was deleted while it waited in the queue starts nothing (a turn would bring it back).
 */
export async function runQueuedTurn(
  services: QueuedTurnServices,
  message: QueuedChatMessage,
  options: RunQueuedTurnOptions,
  log: Pick<Logger, 'log' | 'warn'>,
): Promise<QueuedTurnOutcome> {
  const outcome = await runToEnd(services, message, options, log);
  // Whatever ended the turn (its answer, an error, a stop, a delete), its slot is free once it is over. A turn still
  // running when the wait gave up keeps its slot until its lease runs out (QUOTA_TURN_LEASE_SECONDS).
  if (outcome.ended && services.quota !== undefined) await releaseTurn(services.quota, message);
  return outcome.outcome;
}

async function runToEnd(
  { orchestrations, sessions }: QueuedTurnServices,
  message: QueuedChatMessage,
  options: RunQueuedTurnOptions,
  log: Pick<Logger, 'log' | 'warn'>,
): Promise<{ outcome: QueuedTurnOutcome; ended: boolean }> {
  const instanceId = turnInstanceId(message.sessionId, message.chatMessageId);
  // Both reads at once: the session check adds no wait to the turn.
  const [existing, session] = await Promise.all([
    orchestrations.getStatus(instanceId),
    sessions.find(message.userId, message.sessionId),
  ]);
  if (existing === undefined && session === undefined) {
    log.log(`Turn ${instanceId} not started: its conversation was deleted while the message waited.`);
    return { outcome: 'session-deleted', ended: true };
  }
  if (existing !== undefined && isFinishedStatus(existing.runtimeStatus)) {
    log.log(
      `Turn ${instanceId} already ${existing.runtimeStatus.toLowerCase()}: duplicate delivery ignored.`,
    );
    return { outcome: 'already-finished', ended: true };
  }
  let outcome: QueuedTurnOutcome = existing === undefined ? 'started' : 'already-running';
  if (existing === undefined) {
    // The worker's span, so the turn's activities join its trace.
    const carrier = currentTraceCarrier();
    const input: ChatTurnInput = {
      ...message,
      maxToolRounds: options.maxToolRounds,
      ...(carrier ? { telemetry: { ...carrier, turnPostedAt: message.postedAt } } : {}),
    };
    try {
      await orchestrations.startNew(CHAT_TURN_ORCHESTRATION, { instanceId, input });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      outcome = 'already-running';
    }
  }
  try {
    await orchestrations.waitForCompletion(instanceId, options.waitMs);
  } catch (error) {
    if (!(error instanceof OrchestrationWaitTimeout)) throw error;
    // The turn goes on; only the ordering guarantee for the next message of the session is given up.
    log.warn(`Turn ${instanceId} still running after ${options.waitMs} ms: releasing its session.`);
    return { outcome, ended: false };
  }
  return { outcome, ended: true };
}
