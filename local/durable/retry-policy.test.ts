// The retry schedule of callActivityWithRetry, checked against the framework's RetryOptions semantics.
import * as df from 'durable-functions';
import { describe, expect, it } from 'vitest';
import { nextRetryDelay, toRetryPolicy } from './retry-policy.js';

describe('toRetryPolicy', () => {
  it('fills the fields df.RetryOptions leaves undefined with the framework defaults', () => {
    expect(toRetryPolicy(new df.RetryOptions(100, 3))).toEqual({
      firstRetryIntervalInMilliseconds: 100,
      maxNumberOfAttempts: 3,
      backoffCoefficient: 1,
      maxRetryIntervalInMilliseconds: Number.POSITIVE_INFINITY,
      retryTimeoutInMilliseconds: Number.POSITIVE_INFINITY,
    });
  });

  it('keeps the fields that were set', () => {
    const options = new df.RetryOptions(10, 5);
    options.backoffCoefficient = 3;
    options.maxRetryIntervalInMilliseconds = 50;
    options.retryTimeoutInMilliseconds = 1000;
    expect(toRetryPolicy(options)).toMatchObject({
      backoffCoefficient: 3,
      maxRetryIntervalInMilliseconds: 50,
      retryTimeoutInMilliseconds: 1000,
    });
  });
});

describe('nextRetryDelay', () => {
  const policy = {
    firstRetryIntervalInMilliseconds: 10,
    maxNumberOfAttempts: 5,
    backoffCoefficient: 2,
    maxRetryIntervalInMilliseconds: 50,
    retryTimeoutInMilliseconds: 1000,
  };

  it('backs off exponentially from the first interval, up to the cap', () => {
    expect([1, 2, 3, 4].map((attempt) => nextRetryDelay(policy, attempt, 0))).toEqual([10, 20, 40, 50]);
  });

  it('stops after the last attempt', () => {
    expect(nextRetryDelay(policy, 5, 0)).toBeUndefined();
    expect(nextRetryDelay({ ...policy, maxNumberOfAttempts: 1 }, 1, 0)).toBeUndefined();
  });

  it('stops once the retry timeout has passed since the first attempt', () => {
    expect(nextRetryDelay(policy, 1, 999)).toBe(10);
    expect(nextRetryDelay(policy, 1, 1000)).toBeUndefined();
  });
});
