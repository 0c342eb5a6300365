// The failTurn activity: a turn that could not be answered keeps the user's message with its failure and what its
// client was shown, on the branch it began; the stream ends with `error`, and the turn is announced as failed.
import type { TurnRef } from '../../conversation/messages.js';
import type { WorkingMemory } from '../../conversation/working-memory-store.js';
import { DependencyError } from '../../errors.js';
import type { FailTurnInput } from '../contracts/activities.js';
import { conversationDeleted } from './step-guards.js';
import { TURN_FAILURES } from './turn-failure.js';
import { decideFailure, type FailureStep } from './tool-decision.js';
import { runTurnStep, type StepStart } from './turn-runner.js';
import { now, type FailPorts } from './turn-services.js';

/**
 * Ends a turn that could not be answered: the user's message is kept with the failure, and so is what the client
 * was shown (the stream's kept content and its last sources), as the assistant's partial message, empty when only
 * sources were shown; the stream ends with `error`.
 */
export async function failTurn(services: FailPorts, input: FailTurnInput): Promise<void> {
  await runTurnStep(services, input, () => readFailure(services, input), decideFailure);
}

const UNREACHABLE = Symbol('unreachable');

/** A hot store read, or UNREACHABLE when the store does not answer (any other failure still fails the step). */
function unlessUnreachable<T>(read: Promise<T>): Promise<T | typeof UNREACHABLE> {
  return read.catch((error: unknown) => {
    if (error instanceof DependencyError) return UNREACHABLE;
    throw error;
  });
}

/** Working memory as far as the header knows it (its count and path), for a failure the hot store cannot record. */
async function unplacedMemory(services: FailPorts, ref: TurnRef): Promise<WorkingMemory> {
  const header = await services.headers.get(ref.userId, ref.sessionId);
  return {
    userId: ref.userId,
    sessionId: ref.sessionId,
    messages: [],
    messageCount: header?.messageCount ?? 0,
    ...(header?.path ? { path: header.path } : {}),
  };
}

/** What the failed turn's step reads: working memory and its record (unless the hot store is down), its events. */
async function readFailure(services: FailPorts, input: FailTurnInput): Promise<StepStart<FailureStep>> {
  const [memoryRead, events, turnRead, deleted] = await Promise.all([
    unlessUnreachable(services.workingMemory.load(input.userId, input.sessionId)),
    services.events.read(input.sessionId, input.chatMessageId, 0),
    unlessUnreachable(services.turns.get(input)),
    conversationDeleted(services, input),
  ]);
  // The hot store is down (the likely reason the turn failed): the turn still ends with its error, and its message
  // is kept long-term through message-completed, where the next turn's rebuilt working memory finds it.
  const hotStoreDown = memoryRead === UNREACHABLE || turnRead === UNREACHABLE;
  // A deleted conversation's failure keeps nothing: its header is not read.
  const memory =
    memoryRead !== UNREACHABLE
      ? memoryRead
      : deleted
        ? { userId: input.userId, sessionId: input.sessionId, messages: [], messageCount: 0 }
        : await unplacedMemory(services, input);
  // A failure its step could not place (an activity that never ran it) is named after the store found down.
  const failure =
    hotStoreDown && input.failure.code === 'turn_failed'
      ? TURN_FAILURES.hot_store_unavailable
      : input.failure;
  return {
    state: {
      input: { ...input, failure },
      memory,
      events,
      turn: turnRead === UNREACHABLE ? undefined : turnRead,
      hotStoreDown,
      deleted,
      at: now(services),
    },
    firstSeq: (events.at(-1)?.seq ?? 0) + 1,
  };
}
