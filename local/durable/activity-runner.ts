// Runs one scheduled activity as the Functions host would: a fresh InvocationContext per attempt, JSON
// in and out, and the retries of callActivityWithRetry between attempts. It never throws: failures are results.
import { randomUUID } from 'node:crypto';
import functions, { type LogHandler } from '@azure/functions';
import type * as df from 'durable-functions';
import { describeFailure, toDurableJson, type FailureInfo } from './history.js';
import { nextRetryDelay, type RetryPolicy } from './retry-policy.js';

export type ActivityOutcome =
  { succeeded: true; result: unknown } | { succeeded: false; failure: FailureInfo };

export interface ActivityRun {
  name: string;
  handler: df.ActivityHandler | undefined;
  input: unknown;
  retry?: RetryPolicy;
  logHandler?: LogHandler;
  /** Waits between attempts; resolves false when the wait was cut short (the driver is closing). */
  sleep: (ms: number) => Promise<boolean>;
  /** Monotonic milliseconds, for the retry timeout. */
  clock: () => number;
}

export async function runActivity(run: ActivityRun): Promise<ActivityOutcome> {
  const { handler, name, retry } = run;
  if (handler === undefined) {
    return {
      succeeded: false,
      failure: describeFailure(new Error(`No activity named '${name}' is registered.`)),
    };
  }
  const startedAt = run.clock();
  for (let attempt = 1; ; attempt++) {
    try {
      const context = new functions.InvocationContext({
        invocationId: randomUUID(),
        functionName: name,
        ...(run.logHandler ? { logHandler: run.logHandler } : {}),
        options: { trigger: { type: 'activityTrigger', name: 'input' } },
      });
      const result: unknown = await handler(toDurableJson(run.input), context);
      return { succeeded: true, result: toDurableJson(result) };
    } catch (error) {
      const delay = retry === undefined ? undefined : nextRetryDelay(retry, attempt, run.clock() - startedAt);
      if (delay === undefined || !(await run.sleep(delay)))
        return { succeeded: false, failure: describeFailure(error) };
    }
  }
}
