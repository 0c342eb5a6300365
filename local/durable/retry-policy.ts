// When to retry an activity called with callActivityWithRetry, following the Durable Task framework's
// RetryOptions: exponential backoff from the first interval, capped, within an attempt count and a time budget.
import type * as df from 'durable-functions';

export interface RetryPolicy {
  firstRetryIntervalInMilliseconds: number;
  maxNumberOfAttempts: number;
  backoffCoefficient: number;
  maxRetryIntervalInMilliseconds: number;
  retryTimeoutInMilliseconds: number;
}

/** df.RetryOptions leaves the optional fields undefined; these are the framework's defaults for them. */
export function toRetryPolicy(options: df.RetryOptions): RetryPolicy {
  const first = options.firstRetryIntervalInMilliseconds;
  if (!(first > 0)) throw new RangeError('firstRetryIntervalInMilliseconds value must be greater than 0.');
  return {
    firstRetryIntervalInMilliseconds: first,
    maxNumberOfAttempts: Math.max(1, Math.floor(options.maxNumberOfAttempts)),
    backoffCoefficient: positiveOr(options.backoffCoefficient, 1),
    maxRetryIntervalInMilliseconds: positiveOr(
      options.maxRetryIntervalInMilliseconds,
      Number.POSITIVE_INFINITY,
    ),
    retryTimeoutInMilliseconds: positiveOr(options.retryTimeoutInMilliseconds, Number.POSITIVE_INFINITY),
  };
}

/**
 * The delay before the next attempt after attempt number `failedAttempt` (1-based) failed, or undefined
 * when the activity has used up its attempts or its retry timeout (measured from the first attempt).
 */
export function nextRetryDelay(
  policy: RetryPolicy,
  failedAttempt: number,
  elapsedMs: number,
): number | undefined {
  if (failedAttempt >= policy.maxNumberOfAttempts) return undefined;
  if (elapsedMs >= policy.retryTimeoutInMilliseconds) return undefined;
  const delay = policy.firstRetryIntervalInMilliseconds * policy.backoffCoefficient ** (failedAttempt - 1);
  return Math.min(delay, policy.maxRetryIntervalInMilliseconds);
}

function positiveOr(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && value > 0 ? value : fallback;
}
