// Contract of the local durable driver's task-hub counts: starts, episodes, messages, history events, activities
// and completions of an orchestration written as for df.app.*, what a task hub bills for.
import type { LogHandler } from '@azure/functions';
import type * as df from 'durable-functions';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalDurableDriver } from '../../local/durable/local-durable-driver.js';

const quiet: LogHandler = () => undefined;
const drivers: LocalDurableDriver[] = [];
afterEach(async () => {
  await Promise.all(drivers.splice(0).map((driver) => driver.close()));
});

describe('task-hub events', () => {
  it('counts what one orchestration of two activities in sequence does', async () => {
    const twoSteps = function* (context: df.OrchestrationContext) {
      const first: unknown = yield context.df.callActivity('step', 1);
      const second: unknown = yield context.df.callActivity('step', first);
      return second;
    };
    const driver = new LocalDurableDriver(
      {
        orchestrations: new Map<string, df.OrchestrationHandler>([['twoSteps', twoSteps]]),
        activities: new Map<string, df.ActivityHandler>([['step', (input: unknown) => Number(input) + 1]]),
      },
      { logHandler: quiet },
    );
    drivers.push(driver);
    await driver.startNew('twoSteps', { instanceId: 'counted-1' });
    const status = await driver.waitForCompletion('counted-1', 10_000);
    expect(status.runtimeStatus).toBe('Completed');
    await driver.idle();

    const events = driver.stats();
    // Episodes: the start, then each activity's result; each consumes one message.
    expect(events).toMatchObject({
      orchestrationStarts: 1,
      episodes: 3,
      messages: 3,
      activities: 2,
      activityResults: 2,
      timers: 0,
      eventsRaised: 0,
      completions: 1,
    });
    // Each episode appends its start marker and what it consumed, the first two also what they scheduled.
    expect(events.historyEvents).toBeGreaterThanOrEqual(3 * 2 + 2);
    driver.resetStats();
    expect(driver.stats().episodes).toBe(0);
  });
});
