// The local durable driver against orchestrators and activities written exactly as for df.app.*:
// generator functions over df.OrchestrationContext and (input, InvocationContext) handlers.
import azureFunctions, { type InvocationContext, type LogHandler } from '@azure/functions';
import * as df from 'durable-functions';
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import { createAzureLatencyModel } from '../../local/latency/azure-latency.js';
import {
  InMemoryInstanceStore,
  LocalDurableDriver,
  type DurableRegistry,
} from '../../local/durable/local-durable-driver.js';

const WAIT_MS = 5_000;
const quiet: LogHandler = () => undefined;

/** A promise the test resolves by hand, to hold an activity open. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

function registry(
  orchestrations: Record<string, df.OrchestrationHandler>,
  activities: Record<string, df.ActivityHandler> = {},
): DurableRegistry {
  return {
    orchestrations: new Map(Object.entries(orchestrations)),
    activities: new Map(Object.entries(activities)),
  };
}

const drivers: LocalDurableDriver[] = [];
function driverFor(reg: DurableRegistry, options: ConstructorParameters<typeof LocalDurableDriver>[1] = {}) {
  const driver = new LocalDurableDriver(reg, { logHandler: quiet, timerResolutionMs: 5, ...options });
  drivers.push(driver);
  return driver;
}

afterEach(async () => {
  await Promise.all(drivers.splice(0).map((d) => d.close()));
});

describe('LocalDurableDriver', () => {
  it('runs activities in sequence, feeding each result to the next, with real InvocationContexts', async () => {
    const seen: { input: unknown; functionName: string; isContext: boolean }[] = [];
    const driver = driverFor(
      registry(
        {
          greet: function* (context: df.OrchestrationContext) {
            const name = context.df.getInput<string>();
            const hello: unknown = yield context.df.callActivity('hello', name);
            const shout: unknown = yield context.df.callActivity('shout', hello);
            return { shout, instanceId: context.df.instanceId, orchestrator: context.functionName };
          },
        },
        {
          hello: (input: unknown, context: InvocationContext) => {
            seen.push({
              input,
              functionName: context.functionName,
              isContext: context instanceof azureFunctions.InvocationContext,
            });
            return `hello ${String(input)}`;
          },
          shout: async (input: unknown, context: InvocationContext) => {
            seen.push({
              input,
              functionName: context.functionName,
              isContext: context instanceof azureFunctions.InvocationContext,
            });
            await Promise.resolve();
            return String(input).toUpperCase();
          },
        },
      ),
    );

    await driver.startNew('greet', { instanceId: 'seq-1', input: 'ada' });
    const status = await driver.waitForCompletion('seq-1', WAIT_MS);

    expect(status.runtimeStatus).toBe('Completed');
    expect(status.output).toEqual({ shout: 'HELLO ADA', instanceId: 'seq-1', orchestrator: 'greet' });
    expect(seen).toEqual([
      { input: 'ada', functionName: 'hello', isContext: true },
      { input: 'hello ada', functionName: 'shout', isContext: true },
    ]);
  });

  it('fans out with Task.all: the activities run at the same time and results keep their order', async () => {
    let running = 0;
    let maxRunning = 0;
    const allStarted = gate();
    const driver = driverFor(
      registry(
        {
          fanOut: function* (context: df.OrchestrationContext) {
            const items = context.df.getInput<number[]>();
            const results: unknown = yield context.df.Task.all(
              items.map((n) => context.df.callActivity('square', n)),
            );
            return results;
          },
        },
        {
          square: async (n: number) => {
            running++;
            maxRunning = Math.max(maxRunning, running);
            if (running === 3) allStarted.open();
            await allStarted.promise;
            running--;
            return n * n;
          },
        },
      ),
    );

    await driver.startNew('fanOut', { instanceId: 'fan-1', input: [1, 2, 3] });
    const status = await driver.waitForCompletion('fan-1', WAIT_MS);

    expect(status.output).toEqual([1, 4, 9]);
    expect(maxRunning).toBe(3);
  });

  describe('callActivityWithRetry', () => {
    function retrying(attemptsToFail: number, maxNumberOfAttempts: number) {
      const attempts: number[] = [];
      const reg = registry(
        {
          retrying: function* (context: df.OrchestrationContext) {
            const options = new df.RetryOptions(10, maxNumberOfAttempts);
            options.backoffCoefficient = 2;
            return (yield context.df.callActivityWithRetry('flaky', options, 'payload')) as unknown;
          },
          catching: function* (context: df.OrchestrationContext) {
            try {
              yield context.df.callActivityWithRetry(
                'flaky',
                new df.RetryOptions(1, maxNumberOfAttempts),
                'payload',
              );
              return 'no error';
            } catch (error) {
              const isTaskFailure = error instanceof df.TaskFailedError;
              return { caught: (error as Error).message, isTaskFailure };
            }
          },
        },
        {
          flaky: (input: unknown) => {
            attempts.push(performance.now());
            if (attempts.length <= attemptsToFail) throw new Error(`flaky failure ${attempts.length}`);
            return `ok: ${String(input)}`;
          },
        },
      );
      return { reg, attempts };
    }

    it('retries with backoff until the activity succeeds', async () => {
      const { reg, attempts } = retrying(2, 5);
      const driver = driverFor(reg);

      await driver.startNew('retrying', { instanceId: 'retry-1' });
      const status = await driver.waitForCompletion('retry-1', WAIT_MS);

      expect(status.runtimeStatus).toBe('Completed');
      expect(status.output).toBe('ok: payload');
      expect(attempts).toHaveLength(3);
      // 10 ms, then 20 ms (coefficient 2). Lower bounds with slack: timers may fire a little early by the
      // wall clock when the event loop's cached time is stale.
      expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(7);
      expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(15);
    });

    it('fails the orchestration with the last error once the attempts are used up', async () => {
      const { reg, attempts } = retrying(10, 2);
      const driver = driverFor(reg);

      await driver.startNew('retrying', { instanceId: 'retry-2' });
      const status = await driver.waitForCompletion('retry-2', WAIT_MS);

      expect(status.runtimeStatus).toBe('Failed');
      expect(status.output).toContain('flaky failure 2');
      expect(attempts).toHaveLength(2);
    });

    it('throws the failure into the orchestrator, where it can be caught', async () => {
      const { reg, attempts } = retrying(10, 3);
      const driver = driverFor(reg);

      await driver.startNew('catching', { instanceId: 'retry-3' });
      const status = await driver.waitForCompletion('retry-3', WAIT_MS);

      expect(status.runtimeStatus).toBe('Completed');
      expect(status.output).toEqual({ caught: 'Error: flaky failure 3', isTaskFailure: true });
      expect(attempts).toHaveLength(3);
    });
  });

  it('refuses a second start of a running instance id, and replaces a finished one', async () => {
    let runs = 0;
    const release = gate();
    const driver = driverFor(
      registry(
        {
          once: function* (context: df.OrchestrationContext) {
            return (yield context.df.callActivity('work', context.df.getInput())) as unknown;
          },
        },
        {
          work: async (input: unknown) => {
            runs++;
            await release.promise;
            return input;
          },
        },
      ),
    );

    await driver.startNew('once', { instanceId: 'dup-1', input: 'first' });
    await expect(driver.startNew('once', { instanceId: 'dup-1', input: 'second' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    release.open();
    const first = await driver.waitForCompletion('dup-1', WAIT_MS);
    expect(first.output).toBe('first');
    expect(runs).toBe(1);

    await driver.startNew('once', { instanceId: 'dup-1', input: 'again' });
    const second = await driver.waitForCompletion('dup-1', WAIT_MS);
    expect(second.output).toBe('again');
    expect(runs).toBe(2);
  });

  it('refuses concurrent starts of one id: exactly one wins', async () => {
    const driver = driverFor(
      registry({
        waits: function* (context: df.OrchestrationContext) {
          return (yield context.df.waitForExternalEvent('go')) as unknown;
        },
      }),
    );

    const results = await Promise.allSettled([
      driver.startNew('waits', { instanceId: 'race-1' }),
      driver.startNew('waits', { instanceId: 'race-1' }),
    ]);

    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: expect.any(ConflictError) });
  });

  it('reports Pending, then Running with the custom status, then Completed with the output', async () => {
    const started = new Date('2026-03-01T10:00:00.000Z');
    const driver = driverFor(
      registry({
        status: function* (context: df.OrchestrationContext) {
          context.df.setCustomStatus({ phase: 'waiting' });
          const answer: unknown = yield context.df.waitForExternalEvent('answer');
          context.df.setCustomStatus({ phase: 'done' });
          return { answer };
        },
      }),
      { now: () => started },
    );

    await driver.startNew('status', { instanceId: 'status-1', input: { q: 1 } });
    const pending = await driver.getStatus('status-1');
    expect(pending).toMatchObject({
      runtimeStatus: 'Pending',
      name: 'status',
      input: { q: 1 },
      createdTime: started,
    });

    await driver.idle();
    expect(await driver.getStatus('status-1')).toMatchObject({
      runtimeStatus: 'Running',
      customStatus: { phase: 'waiting' },
      output: null,
    });

    await driver.raiseEvent('status-1', 'answer', 42);
    const done = await driver.waitForCompletion('status-1', WAIT_MS);
    expect(done).toMatchObject({
      runtimeStatus: 'Completed',
      output: { answer: 42 },
      customStatus: { phase: 'done' },
    });
    expect(await driver.getStatus('unknown')).toBeUndefined();
  });

  it('reports Failed with the error message of an uncaught throw', async () => {
    const driver = driverFor(
      registry(
        {
          failing: function* (context: df.OrchestrationContext) {
            yield context.df.callActivity('explode');
            return 'unreachable';
          },
        },
        {
          explode: () => {
            throw new Error('the model is unreachable');
          },
        },
      ),
    );

    await driver.startNew('failing', { instanceId: 'fail-1' });
    const status = await driver.waitForCompletion('fail-1', WAIT_MS);

    expect(status.runtimeStatus).toBe('Failed');
    expect(status.output).toBe("Orchestrator function 'failing' failed: Error: the model is unreachable");
  });

  it('delivers external events raised before the wait (buffered) and after it', async () => {
    const slowStarted = gate();
    const holdActivity = gate();
    const driver = driverFor(
      registry(
        {
          approvals: function* (context: df.OrchestrationContext) {
            yield context.df.callActivity('slow');
            const early: unknown = yield context.df.waitForExternalEvent('approval');
            const late: unknown = yield context.df.waitForExternalEvent('approval');
            return [early, late];
          },
        },
        {
          slow: () => {
            slowStarted.open();
            return holdActivity.promise;
          },
        },
      ),
    );

    await driver.startNew('approvals', { instanceId: 'events-1' });
    await slowStarted.promise; // the orchestrator now waits on `slow`, not yet on the event
    await driver.raiseEvent('events-1', 'approval', { by: 'early' });
    holdActivity.open();
    await driver.idle();
    expect((await driver.getStatus('events-1'))?.runtimeStatus).toBe('Running');

    await driver.raiseEvent('events-1', 'approval', { by: 'late' });
    const status = await driver.waitForCompletion('events-1', WAIT_MS);
    expect(status.output).toEqual([{ by: 'early' }, { by: 'late' }]);
  });

  describe('Task.any with a timer (timeout pattern)', () => {
    const timeout: df.OrchestrationHandler = function* (context: df.OrchestrationContext) {
      const deadline = new Date(context.df.currentUtcDateTime.getTime() + context.df.getInput<number>());
      const timer = context.df.createTimer(deadline);
      const reply = context.df.waitForExternalEvent('reply');
      const winner: unknown = yield context.df.Task.any([reply, timer]);
      if (winner === reply) {
        timer.cancel();
        return { reply: reply.result };
      }
      return 'timed out';
    };

    it('returns the event when it comes first, and the cancelled timer never fires', async () => {
      const store = new InMemoryInstanceStore();
      const driver = driverFor(registry({ timeout }), { store });

      await driver.startNew('timeout', { instanceId: 'any-1', input: 60_000 });
      await driver.idle();
      await driver.raiseEvent('any-1', 'reply', 'pong');
      const status = await driver.waitForCompletion('any-1', WAIT_MS);

      expect(status.output).toEqual({ reply: 'pong' });
      const history = (await store.get('any-1'))!.history;
      expect(history.some((e) => e.type === 'timerFired')).toBe(false);
    });

    it('times out when the timer fires first', async () => {
      const driver = driverFor(registry({ timeout }));

      await driver.startNew('timeout', { instanceId: 'any-2', input: 15 });
      const status = await driver.waitForCompletion('any-2', WAIT_MS);

      expect(status.output).toBe('timed out');
    });

    it('follows the injected clock: the timer fires only when the clock passes its deadline', async () => {
      let now = new Date('2026-03-01T10:00:00.000Z');
      const driver = driverFor(registry({ timeout }), { now: () => now });

      await driver.startNew('timeout', { instanceId: 'any-3', input: 60 * 60_000 });
      await driver.idle();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await driver.getStatus('any-3'))?.runtimeStatus).toBe('Running');

      now = new Date('2026-03-01T11:00:00.000Z');
      const status = await driver.waitForCompletion('any-3', WAIT_MS);
      expect(status.output).toBe('timed out');
    });
  });

  it('replays deterministically: isReplaying and currentUtcDateTime come from the history', async () => {
    let clock = Date.parse('2026-03-01T10:00:00.000Z');
    type Observation = { replaying: boolean; time: string };
    const observations: Observation[] = [];
    const driver = driverFor(
      registry(
        {
          observed: function* (context: df.OrchestrationContext) {
            const note = () =>
              observations.push({
                replaying: context.df.isReplaying,
                time: context.df.currentUtcDateTime.toISOString(),
              });
            note();
            yield context.df.callActivity('noop');
            note();
            return 'ok';
          },
        },
        { noop: () => null },
      ),
      { now: () => new Date((clock += 1000)) },
    );

    await driver.startNew('observed', { instanceId: 'replay-1' });
    await driver.waitForCompletion('replay-1', WAIT_MS);

    // Episode 1 runs up to the activity; episode 2 replays that part, then continues.
    expect(observations).toHaveLength(3);
    const [first, replayed, continued] = observations as [Observation, Observation, Observation];
    expect(first.replaying).toBe(false);
    expect(replayed).toEqual({ ...first, replaying: true });
    expect(continued.replaying).toBe(false);
    expect(Date.parse(continued.time)).toBeGreaterThan(Date.parse(first.time));
  });

  it('fails an orchestrator that schedules different work on replay, naming the mismatch', async () => {
    let calls = 0;
    const driver = driverFor(
      registry(
        {
          // A stand-in for Math.random()/Date.now(): a different activity on every execution of the code.
          nondeterministic: function* (context: df.OrchestrationContext) {
            calls++;
            yield context.df.callActivity(calls === 1 ? 'first' : 'second');
            return 'unreachable';
          },
        },
        { first: () => 1, second: () => 2 },
      ),
    );

    await driver.startNew('nondeterministic', { instanceId: 'nd-1' });
    const status = await driver.waitForCompletion('nd-1', WAIT_MS);

    expect(status.runtimeStatus).toBe('Failed');
    expect(status.output).toContain('Non-deterministic orchestrator');
    expect(status.output).toContain("activity 'second'");
    expect(status.output).toContain("activity 'first'");
  });

  it('terminates a running instance: status, output and later events are settled', async () => {
    const driver = driverFor(
      registry({
        forever: function* (context: df.OrchestrationContext) {
          yield context.df.waitForExternalEvent('never');
          return 'unreachable';
        },
      }),
    );

    await driver.startNew('forever', { instanceId: 'term-1' });
    await driver.idle();
    const finished = driver.waitForCompletion('term-1', WAIT_MS);
    await driver.terminate('term-1', 'user cancelled');

    expect(await finished).toMatchObject({ runtimeStatus: 'Terminated', output: 'user cancelled' });
    await driver.raiseEvent('term-1', 'never', 'late'); // dropped, as Durable does for a finished instance
    await driver.idle();
    expect((await driver.getStatus('term-1'))?.runtimeStatus).toBe('Terminated');
    await expect(driver.terminate('nobody', 'x')).rejects.toBeInstanceOf(NotFoundError);
    await expect(driver.raiseEvent('nobody', 'x')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('purges a finished instance and refuses to purge a running one', async () => {
    const driver = driverFor(
      registry({
        forever: function* (context: df.OrchestrationContext) {
          yield context.df.waitForExternalEvent('never');
          return 'unreachable';
        },
      }),
    );

    await driver.startNew('forever', { instanceId: 'purge-1' });
    await driver.idle();
    await expect(driver.purge('purge-1')).rejects.toBeInstanceOf(ConflictError);
    await driver.terminate('purge-1', 'conversation deleted');
    await expect(driver.purge('purge-1')).resolves.toBe(true);
    expect(await driver.getStatus('purge-1')).toBeUndefined();
    await expect(driver.purge('purge-1')).resolves.toBe(false);
    // The id may be used again, as after a task hub purge.
    await driver.startNew('forever', { instanceId: 'purge-1' });
    expect((await driver.getStatus('purge-1'))?.runtimeStatus).toMatch(/Pending|Running/);
  });

  it('rejects unknown orchestrations and stops accepting work once closed', async () => {
    const driver = driverFor(registry({}));
    await expect(driver.startNew('missing', { instanceId: 'x' })).rejects.toBeInstanceOf(NotFoundError);
    await driver.close();
    await expect(driver.startNew('missing', { instanceId: 'x' })).rejects.toThrow(/closed/);
  });
});

describe('LocalDurableDriver under the Azure latency model', () => {
  it('runs a fan-out and a sequence to the same output, each activity once, with every dispatch late', async () => {
    const runs = new Map<string, number>();
    const count = (name: string) => runs.set(name, (runs.get(name) ?? 0) + 1);
    const driver = driverFor(
      registry(
        {
          pipeline: function* (context: df.OrchestrationContext) {
            const parts: unknown = yield context.df.Task.all(
              ['a', 'b', 'c'].map((part) => context.df.callActivity('upper', part)),
            );
            const joined: unknown = yield context.df.callActivity('join', parts);
            return joined;
          },
        },
        {
          upper: (input: unknown) => {
            count(`upper ${String(input)}`);
            return String(input).toUpperCase();
          },
          join: (input: unknown) => {
            count('join');
            return (input as string[]).join('-');
          },
        },
      ),
      {
        latency: createAzureLatencyModel({
          seed: 3,
          taskHub: 'azure-storage',
          maxQueuePollingIntervalMs: 40,
        }),
      },
    );

    await driver.startNew('pipeline', { instanceId: 'late-1' });
    const status = await driver.waitForCompletion('late-1', WAIT_MS);

    expect(status).toMatchObject({ runtimeStatus: 'Completed', output: 'A-B-C' });
    expect(Object.fromEntries(runs)).toEqual({ 'upper a': 1, 'upper b': 1, 'upper c': 1, join: 1 });
    expect(await driver.getStatus('late-1')).toMatchObject({ runtimeStatus: 'Completed' });
  });
});
