// What a failed turn tells its client: the class of what failed (the model, storage, the hot store, a quota), named
// by the failing step and carried to the orchestration in its error's message, the one part a failed activity keeps.
import { AppError, DependencyError, QuotaExceededError, ensureError } from '../../errors.js';
import type { TurnFailure } from '../../conversation/messages.js';

export type TurnFailureCode =
  'llm_unavailable' | 'storage_unavailable' | 'hot_store_unavailable' | 'quota_exceeded' | 'turn_failed';

const KEPT = 'Your message is kept; send it again later.';

/** The message a client shows for each class. */
export const TURN_FAILURES: Record<TurnFailureCode, TurnFailure> = {
  llm_unavailable: { code: 'llm_unavailable', message: `The model did not answer. ${KEPT}` },
  storage_unavailable: {
    code: 'storage_unavailable',
    message: `The conversation store (Cosmos DB) did not answer. ${KEPT}`,
  },
  hot_store_unavailable: {
    code: 'hot_store_unavailable',
    message: `The working-memory store (the hot store) did not answer. ${KEPT}`,
  },
  quota_exceeded: {
    code: 'quota_exceeded',
    message:
      'Your usage limit was reached before the answer ended. Your message is kept; send it again later.',
  },
  turn_failed: { code: 'turn_failed', message: `The answer could not be completed. ${KEPT}` },
};

/** Which class each dependency a port names belongs to. */
const DEPENDENCY_CLASSES: Record<string, TurnFailureCode> = {
  llm: 'llm_unavailable',
  cosmos: 'storage_unavailable',
  turnEvents: 'storage_unavailable',
  redis: 'hot_store_unavailable',
  'hot-store': 'hot_store_unavailable',
};

/** The class of a failure where it happened (a step's own error, before it leaves the activity). */
export function failureClassOf(error: unknown): TurnFailureCode {
  if (error instanceof TurnStepError) return error.failureCode;
  if (error instanceof QuotaExceededError) return 'quota_exceeded';
  if (error instanceof DependencyError) return DEPENDENCY_CLASSES[error.dependency] ?? 'turn_failed';
  return 'turn_failed';
}

const MARK = /\[turn-failure:([a-z_]+)\]/;

/**
 * A step's failure as it leaves the activity: the original error (its `cause`) with its class marked in the message,
 * so the orchestration, which gets only the message of a failed activity, can tell its client what failed.
 */
export class TurnStepError extends Error {
  constructor(
    readonly failureCode: TurnFailureCode,
    cause: unknown,
  ) {
    super(`[turn-failure:${failureCode}] ${ensureError(cause).message}`, { cause });
    this.name = 'TurnStepError';
  }
}

/** Runs a step, marking what it throws with the class of the failure (errors already marked pass as they are). */
export async function markingFailures<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof TurnStepError) throw error;
    throw new TurnStepError(failureClassOf(error), error);
  }
}

/** The unmarked error inside a step's failure (tests and logs look at what the step really threw). */
export function stepCause(error: unknown): unknown {
  return error instanceof TurnStepError ? error.cause : error;
}

/**
 * What the client of a turn whose activity failed is told, from the failure the orchestration received: the class
 * its step marked, or, unmarked (an activity that never ran its step), the turn's generic failure. Pure.
 */
export function turnFailureOf(error: unknown): TurnFailure {
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  const code = MARK.exec(message)?.[1];
  if (code !== undefined && code in TURN_FAILURES) return TURN_FAILURES[code as TurnFailureCode];
  if (error instanceof AppError) return TURN_FAILURES[failureClassOf(error)];
  return TURN_FAILURES.turn_failed;
}
