// The chat worker's use-case: run a queued message's first model round (or leave it to the chatTurn orchestration),
// start the orchestration when the turn needs more, then hold the message (and with it the Service Bus session)
// until the turn has finished or waits for its user's yes, so the session's next message is answered after it.
import {
  OrchestrationWaitTimeout,
  isFinishedStatus,
  type OrchestrationClient,
} from '../../durable/orchestration-client.js';
import type { TurnEventStore } from '../../streaming/turn-event-store.js';
import type { TurnStateStore } from '../turn-state-store.js';
import { moveOnFromParkedTurn, waitForEndOrPark } from './parked-turns.js';
import { ConflictError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { releaseTurn, type QuotaServices } from '../../quota/quota-gate.js';
import {
  CHAT_TURN_ORCHESTRATION,
  type ChatTurnInput,
  type LlmStepInput,
  type LlmStepOutput,
} from '../contracts/activities.js';
import { assistantMessageId, turnInstanceId } from '../../conversation/turn-ids.js';
import type { WorkingMemoryStore } from '../../conversation/working-memory-store.js';
import { DUPLICATE_DETECTION_WINDOW_MS } from '../../messaging/service-bus-entities.js';
import type { QueuedChatMessage } from '../contracts/queue.js';
import type { SessionStore } from '../../conversation/session-store.js';
import { currentTraceCarrier } from '../../telemetry/propagation.js';
import { llmStepInputOf } from './chat-turn-orchestration.js';

export interface RunQueuedTurnOptions {
  maxToolRounds: number;
  /** How long to hold the session for a running turn before letting the next message through. */
  waitMs: number;
}

/** `answered`: the worker's round 0 answered (or ended a stopped turn) and no orchestration was needed. */
export type QueuedTurnOutcome =
  'started' | 'answered' | 'already-finished' | 'already-running' | 'session-deleted';

export interface QueuedTurnServices {
  orchestrations: OrchestrationClient;
  /**
   * Finds no session once its conversation is being deleted; read only when the orchestration runs round 0 (the
   * worker's own round 0 reads the conversation's tombstone itself).
   */
  sessions: Pick<SessionStore, 'find'>;
  /**
   * CHAT_FIRST_ROUND=worker: runs the turn's llmStep for round 0 here (counted and traced as its activity would
   * be). Absent: the orchestration runs every round.
   */
  firstRound?: (input: LlmStepInput) => Promise<LlmStepOutput>;
  /**
   * Where a message posted before the duplicate-detection window, with no orchestration, finds whether its turn was
   * answered already (a re-post of a turn the worker answered: Service Bus no longer drops it, and its answer may
   * have left working memory's window, where the step would look). Absent: not looked up.
   */
  workingMemory?: Pick<WorkingMemoryStore, 'findTurn'>;
  /** Frees the turn's QUOTA_CONCURRENT_TURNS slot once it has ended (or will never start). */
  quota?: Pick<QuotaServices, 'config' | 'state'>;
  /**
   * Where the session's turn waiting for its user's yes is found, and its approvals denied when the session's next
   * message comes (the user moved on). Absent: not looked for.
   */
  turns?: Pick<TurnStateStore, 'parkedTurn' | 'recordApprovalAnswer'>;
  events?: Pick<TurnEventStore, 'read'>;
}

/**
 * A redelivered or re-posted message finds its instance and never starts a second turn. A message whose conversation
 * was deleted while it waited in the queue starts nothing (a turn would bring it back). With `firstRound`, a turn
 * the model answers without tools starts no orchestration at all: two task-hub dispatches fewer before its answer.
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
  services: QueuedTurnServices,
  message: QueuedChatMessage,
  options: RunQueuedTurnOptions,
  log: Pick<Logger, 'log' | 'warn'>,
): Promise<{ outcome: QueuedTurnOutcome; ended: boolean }> {
  const { orchestrations, sessions, firstRound, turns, events } = services;
  const instanceId = turnInstanceId(message.sessionId, message.chatMessageId);
  // Both reads at once: the session check adds no wait to the turn. The worker's own round 0 needs no session read:
  // its step reads the conversation's tombstone beside its other reads, and keeps nothing of a deleted one.
  const [existing, session, parked] = await Promise.all([
    orchestrations.getStatus(instanceId),
    firstRound ? undefined : sessions.find(message.userId, message.sessionId),
    // Only in a session where a turn has waited for its user's yes: no other turn pays the read.
    message.mayPark === true ? turns?.parkedTurn(message.sessionId) : undefined,
  ]);
  if (turns !== undefined && events !== undefined)
    await moveOnFromParkedTurn({ orchestrations, turns, events }, message, parked, options.waitMs, log);
  if (existing === undefined && session === undefined && !firstRound) {
    log.log(`Turn ${instanceId} not started: its conversation was deleted while the message waited.`);
    return { outcome: 'session-deleted', ended: true };
  }
  if (existing !== undefined && isFinishedStatus(existing.runtimeStatus)) {
    log.log(
      `Turn ${instanceId} already ${existing.runtimeStatus.toLowerCase()}: duplicate delivery ignored.`,
    );
    return { outcome: 'already-finished', ended: true };
  }
  if (existing === undefined && (await answeredBefore(services, message))) {
    log.log(`Turn ${instanceId} already answered: a re-post of it is ignored.`);
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
    if (firstRound) {
      const step = await runFirstRound(firstRound, input, instanceId, log);
      if (step?.outcome === 'answered') return { outcome: 'answered', ended: true };
      if (step?.outcome === 'deleted') return { outcome: 'session-deleted', ended: true };
      // Tools: the orchestration starts at this round's tool calls. A failed round: it runs round 0 again.
      if (step) input.firstRound = { ...step, outcome: 'tools' };
    }
    try {
      await orchestrations.startNew(CHAT_TURN_ORCHESTRATION, { instanceId, input });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      outcome = 'already-running';
    }
  }
  try {
    // A turn waiting for its user's yes holds no session: the next message may come, and denies the wait.
    if ((await waitForEndOrPark(orchestrations, instanceId, options.waitMs)) === 'parked') {
      log.log(`Turn ${instanceId} waits for its user's approval: releasing its session.`);
      return { outcome, ended: false };
    }
  } catch (error) {
    if (!(error instanceof OrchestrationWaitTimeout)) throw error;
    // The turn goes on; only the ordering guarantee for the next message of the session is given up.
    log.warn(`Turn ${instanceId} still running after ${options.waitMs} ms: releasing its session.`);
    return { outcome, ended: false };
  }
  return { outcome, ended: true };
}

/**
 * Round 0 run by the worker itself, with the input the orchestration would give its activity. It is safe here for the
 * reason it is safe as an activity run again: the step goes on from what is stored. A message redelivered after the
 * worker died mid-round finds no orchestration (none is started before the round ends) and runs the round again:
 * its `message-start` is stored already, so the step reads what the died attempt left, and either finishes the
 * answer it had committed (ending its stream once) or voids with `discard` what it had shown and streams anew; a
 * round that had recorded its tool calls returns them without calling the model. Undefined: the round failed, and
 * the orchestration runs it again under its retry policy (ending the turn with failTurn if it keeps failing).
 */
async function runFirstRound(
  firstRound: NonNullable<QueuedTurnServices['firstRound']>,
  input: ChatTurnInput,
  instanceId: string,
  log: Pick<Logger, 'warn'>,
): Promise<LlmStepOutput | undefined> {
  try {
    return await firstRound(llmStepInputOf(input, { round: 0, firstSeq: 1, toolRounds: 0 }));
  } catch (error) {
    log.warn(
      `Turn ${instanceId}: round 0 failed in the chat worker; the orchestration runs it again:`,
      error,
    );
    return undefined;
  }
}

/**
 * Whether the turn of a message posted before the duplicate-detection window has its answer in the conversation
 * (one read, only for such a message: a queue that held it that long, or a re-post Service Bus let through).
 */
async function answeredBefore(services: QueuedTurnServices, message: QueuedChatMessage): Promise<boolean> {
  const { workingMemory } = services;
  if (workingMemory === undefined) return false;
  if (Date.now() - Date.parse(message.postedAt) <= DUPLICATE_DETECTION_WINDOW_MS) return false;
  const turn = await workingMemory.findTurn(message.userId, message.sessionId, message.chatMessageId);
  const answer = assistantMessageId(message.chatMessageId);
  return turn?.messages.some((m) => m.messageId === answer) ?? false;
}
