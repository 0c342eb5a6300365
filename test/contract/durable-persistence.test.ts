// The local durable driver across restarts and crashes, with orchestrators written as for df.app.*: what a
// client was told is saved survives, a saved result is never re-run, and everything else is redone by replay.
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogHandler } from '@azure/functions';
import type * as df from 'durable-functions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CorruptDataFileError,
  LocalDurableDriver,
  type DurableRegistry,
  type InstanceRecord,
  type LocalDurableDriverOpenOptions,
} from '../../local/durable/local-durable-driver.js';
import { FileInstanceStore } from '../../local/durable/file-instance-store.js';

const WAIT_MS = 5_000;
const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const MINUTE = 60_000;
const quiet: LogHandler = () => undefined;

function registry(
  orchestrations: Record<string, df.OrchestrationHandler>,
  activities: Record<string, df.ActivityHandler> = {},
): DurableRegistry {
  return {
    orchestrations: new Map(Object.entries(orchestrations)),
    activities: new Map(Object.entries(activities)),
  };
}

/** A promise the test resolves by hand. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

let dir: string;
let drivers: LocalDurableDriver[];
/** Activities of a "crashed" driver never settle during the test; they are let go only to close it. */
let stuck: ReturnType<typeof gate>[];
let copies: number;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-persistence-'));
  drivers = [];
  stuck = [];
  copies = 0;
});

afterEach(async () => {
  const closing = drivers.map((driver) => driver.close());
  for (const activity of stuck) activity.open();
  await Promise.all(closing);
  await rm(dir, { recursive: true, force: true });
});

async function openDriver(reg: DurableRegistry, options: LocalDurableDriverOpenOptions = {}) {
  const driver = await LocalDurableDriver.open(reg, {
    logHandler: quiet,
    timerResolutionMs: 5,
    flushDelayMs: 5,
    ...options,
  });
  drivers.push(driver);
  return driver;
}

/** Never settles while the test runs, as an activity in a process that is about to die. */
function stuckForever(): Promise<void> {
  const forever = gate();
  stuck.push(forever);
  return forever.promise;
}

/** An activity that reports it started and then never settles. */
function hangs(started?: ReturnType<typeof gate>): df.ActivityHandler {
  return async () => {
    started?.open();
    await stuckForever();
    return 'released at teardown';
  };
}

/**
 * What a crash leaves on disk is the snapshot and its journals as they are at that instant (every change is
 * appended to the journal at once). The second driver opens a copy taken now, so the first one, still alive in
 * this process, cannot write over it.
 */
async function crash(file: string): Promise<string> {
  const copy = join(dir, `after-crash-${++copies}.json`);
  const name = file.split('/').at(-1)!;
  for (const entry of await readdir(dir)) {
    if (entry === name) await copyFile(file, copy);
    else if (entry.startsWith(`${name}.`) && entry.endsWith('.journal'))
      await copyFile(join(dir, entry), `${copy}${entry.slice(name.length)}`);
  }
  return copy;
}

/** The record as a restart would load it now (from a copy, so nothing of the original changes). */
async function savedRecord(file: string, instanceId: string): Promise<InstanceRecord | undefined> {
  const store = await FileInstanceStore.open(await crash(file));
  try {
    return await store.get(instanceId);
  } finally {
    await store.close();
  }
}

/** Polls until the batched save has written what `check` looks for. */
async function waitForSave(
  file: string,
  instanceId: string,
  check: (record: InstanceRecord) => boolean,
): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const record = await savedRecord(file, instanceId);
    if (record !== undefined && check(record)) return;
    if (Date.now() > deadline) throw new Error(`${file} never showed the expected state of '${instanceId}'.`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('The condition never held.');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const chain: df.OrchestrationHandler = function* (context: df.OrchestrationContext) {
  const a: unknown = yield context.df.callActivity('A', context.df.getInput());
  const b: unknown = yield context.df.callActivity('B', a);
  return (yield context.df.callActivity('C', b)) as unknown;
};

describe('LocalDurableDriver with a data file', () => {
  it('resumes after a crash: a saved result is not re-run, the unfinished activity runs again', async () => {
    const calls = { A: 0, B: 0, C: 0 };
    const a = (input: string) => (calls.A++, `${input}-a`);
    const c = (input: string) => (calls.C++, `${input}-c`);
    const bStarted = gate();
    const file = join(dir, 'durable.json');
    const first = await openDriver(
      registry(
        { chain },
        {
          A: a,
          B: async () => {
            calls.B++;
            bStarted.open();
            await stuckForever();
          },
          C: c,
        },
      ),
      { dataFile: file },
    );

    await first.startNew('chain', { instanceId: 'chain-1', input: 'in' });
    await bStarted.promise;
    await waitForSave(file, 'chain-1', (r) =>
      r.history.some((e) => e.type === 'taskCompleted' && e.seq === 0),
    );
    const afterCrash = await crash(file);

    const second = await openDriver(
      registry({ chain }, { A: a, B: (input: string) => (calls.B++, `${input}-b`), C: c }),
      { dataFile: afterCrash },
    );
    const status = await second.waitForCompletion('chain-1', WAIT_MS);

    expect(status).toMatchObject({ runtimeStatus: 'Completed', output: 'in-a-b-c', input: 'in' });
    expect(calls).toEqual({ A: 1, B: 2, C: 1 });
  });

  it('keeps an instance whose startNew resolved, even when the process dies right after', async () => {
    const worked: unknown[] = [];
    const file = join(dir, 'durable.json');
    // A long batching delay: only what startNew itself waited for is on disk.
    const first = await openDriver(registry({ chain }, { A: hangs() }), {
      dataFile: file,
      flushDelayMs: 60_000,
    });

    await first.startNew('chain', { instanceId: 'turn-1', input: 'msg' });
    const afterCrash = await crash(file);

    expect(await savedRecord(afterCrash, 'turn-1')).toMatchObject({ name: 'chain', input: 'msg' });
    const record = (input: string, step: string) => (worked.push([step, input]), `${input}+${step}`);
    const second = await openDriver(
      registry(
        { chain },
        {
          A: (input: string) => record(input, 'a'),
          B: (input: string) => record(input, 'b'),
          C: (input: string) => record(input, 'c'),
        },
      ),
      { dataFile: afterCrash },
    );
    const status = await second.waitForCompletion('turn-1', WAIT_MS);

    expect(status.output).toBe('msg+a+b+c');
    expect(worked).toEqual([
      ['a', 'msg'],
      ['b', 'msg+a'],
      ['c', 'msg+a+b'],
    ]);
  });

  it('consumes after resume an external event raised before the crash', async () => {
    const approvals: df.OrchestrationHandler = function* (context: df.OrchestrationContext) {
      yield context.df.callActivity('prepare');
      const approval: unknown = yield context.df.waitForExternalEvent('approval');
      return { approval };
    };
    const prepareStarted = gate();
    const file = join(dir, 'durable.json');
    const first = await openDriver(registry({ approvals }, { prepare: hangs(prepareStarted) }), {
      dataFile: file,
      flushDelayMs: 60_000,
    });

    await first.startNew('approvals', { instanceId: 'ev-1' });
    await prepareStarted.promise; // the event arrives before anyone waits for it: it is buffered
    await first.raiseEvent('ev-1', 'approval', { by: 'ada' });
    const afterCrash = await crash(file);

    let prepared = 0;
    const second = await openDriver(registry({ approvals }, { prepare: () => ++prepared }), {
      dataFile: afterCrash,
    });
    const status = await second.waitForCompletion('ev-1', WAIT_MS);

    expect(status.output).toEqual({ approval: { by: 'ada' } });
    expect(prepared).toBe(1);
  });

  describe('durable timers', () => {
    const waitsAnHour: df.OrchestrationHandler = function* (context: df.OrchestrationContext) {
      const fireAt = new Date(context.df.currentUtcDateTime.getTime() + 60 * MINUTE);
      yield context.df.createTimer(fireAt);
      return 'fired';
    };

    /** Runs until the timer is saved, then crashes; the clock stands still at T0 in the first process. */
    async function crashWhileTimerRuns(): Promise<string> {
      const file = join(dir, 'durable.json');
      const first = await openDriver(registry({ waitsAnHour }), { dataFile: file, now: () => new Date(T0) });
      await first.startNew('waitsAnHour', { instanceId: 'timer-1' });
      await waitForSave(file, 'timer-1', (r) => r.history.some((e) => e.type === 'taskScheduled'));
      return crash(file);
    }

    it('fires at once on resume when it came due while the process was down', async () => {
      const afterCrash = await crashWhileTimerRuns();

      const second = await openDriver(registry({ waitsAnHour }), {
        dataFile: afterCrash,
        now: () => new Date(T0 + 120 * MINUTE),
      });

      expect(await second.waitForCompletion('timer-1', WAIT_MS)).toMatchObject({
        runtimeStatus: 'Completed',
        output: 'fired',
      });
    });

    it('re-arms for its original fire time when it is not yet due', async () => {
      const afterCrash = await crashWhileTimerRuns();
      let now = new Date(T0 + 30 * MINUTE);

      const second = await openDriver(registry({ waitsAnHour }), { dataFile: afterCrash, now: () => now });
      await second.idle();
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect((await second.getStatus('timer-1'))?.runtimeStatus).toBe('Running');

      now = new Date(T0 + 60 * MINUTE);
      expect((await second.waitForCompletion('timer-1', WAIT_MS)).output).toBe('fired');
    });
  });

  it('still detects a non-deterministic orchestrator when it resumes', async () => {
    const file = join(dir, 'durable.json');
    const first = await openDriver(registry({ chain }, { A: hangs() }), { dataFile: file });
    await first.startNew('chain', { instanceId: 'nd-1', input: 'x' });
    await waitForSave(file, 'nd-1', (r) => r.history.some((e) => e.type === 'taskScheduled'));
    const afterCrash = await crash(file);

    // The code changed while the process was down: its first step is now another activity.
    const changed: df.OrchestrationHandler = function* (context: df.OrchestrationContext) {
      return (yield context.df.callActivity('Z')) as unknown;
    };
    const second = await openDriver(registry({ chain: changed }, { Z: () => 'z' }), { dataFile: afterCrash });
    const status = await second.waitForCompletion('nd-1', WAIT_MS);

    expect(status.runtimeStatus).toBe('Failed');
    expect(status.output).toContain('Non-deterministic orchestrator');
    expect(status.output).toContain("activity 'A'");
  });

  it('keeps the result of an activity that finished while close() waited, without running it again', async () => {
    let runs = 0;
    const release = gate();
    const file = join(dir, 'durable.json');
    const reg = registry(
      {
        once: function* (context: df.OrchestrationContext) {
          return (yield context.df.callActivity('slow')) as unknown;
        },
      },
      {
        slow: async () => {
          runs++;
          await release.promise;
          return 'slow result';
        },
      },
    );
    const first = await openDriver(reg, { dataFile: file });
    await first.startNew('once', { instanceId: 'close-1' });
    await eventually(() => Promise.resolve(runs === 1));

    const closing = first.close();
    release.open();
    await closing;
    const second = await openDriver(reg, { dataFile: file });

    expect((await second.waitForCompletion('close-1', WAIT_MS)).output).toBe('slow result');
    expect(runs).toBe(1);
  });

  it("keeps finished instances' status (output, custom status, failure) across a restart", async () => {
    const file = join(dir, 'durable.json');
    const reg = registry(
      {
        reports: function* (context: df.OrchestrationContext) {
          context.df.setCustomStatus({ phase: 'done', tokens: 12 });
          yield context.df.callActivity('noop');
          return { answer: context.df.getInput<number>() * 2 };
        },
        fails: function* (context: df.OrchestrationContext) {
          yield context.df.callActivity('explode');
          return 'unreachable';
        },
      },
      {
        noop: () => null,
        explode: () => {
          throw new Error('the model is unreachable');
        },
      },
    );
    const first = await openDriver(reg, { dataFile: file });
    await first.startNew('reports', { instanceId: 'done-1', input: 21 });
    await first.startNew('fails', { instanceId: 'failed-1' });
    const completed = await first.waitForCompletion('done-1', WAIT_MS);
    const failed = await first.waitForCompletion('failed-1', WAIT_MS);
    await first.close();

    const second = await openDriver(reg, { dataFile: file });

    expect(await second.getStatus('done-1')).toEqual(completed);
    expect(await second.getStatus('failed-1')).toEqual(failed);
    expect(completed).toMatchObject({ output: { answer: 42 }, customStatus: { phase: 'done', tokens: 12 } });
    expect(failed.output).toContain('the model is unreachable');
  });

  it('forgets a purged instance for good: a crash right after the purge does not bring it back', async () => {
    const file = join(dir, 'durable.json');
    const reg = registry({
      quick: function* () {
        yield* [];
        return 'ok';
      },
    });
    const driver = await openDriver(reg, { dataFile: file });
    await driver.startNew('quick', { instanceId: 'purged-1' });
    await driver.startNew('quick', { instanceId: 'kept-1' });
    await driver.waitForCompletion('purged-1', WAIT_MS);
    await driver.waitForCompletion('kept-1', WAIT_MS);
    expect(await driver.purge('purged-1')).toBe(true);

    // purge resolved once the deletion was saved.
    expect(await savedRecord(file, 'purged-1')).toBeUndefined();
    expect(await savedRecord(file, 'kept-1')).toMatchObject({ runtimeStatus: 'Completed' });
  });

  describe('retention', () => {
    const quick: df.OrchestrationHandler = function* () {
      yield* [];
      return 'ok';
    };
    const waits: df.OrchestrationHandler = function* (context: df.OrchestrationContext) {
      return (yield context.df.waitForExternalEvent('never')) as unknown;
    };

    it('purges finished instances older than the retention at open, from memory and file', async () => {
      const file = join(dir, 'durable.json');
      const reg = registry({ quick, waits });
      const first = await openDriver(reg, { dataFile: file, now: () => new Date(T0) });
      await first.startNew('quick', { instanceId: 'old-done' });
      await first.startNew('waits', { instanceId: 'old-running' });
      await first.waitForCompletion('old-done', WAIT_MS);
      await first.close();

      const soon = await openDriver(reg, {
        dataFile: file,
        retentionMs: 60 * MINUTE,
        now: () => new Date(T0 + 30 * MINUTE),
      });
      expect((await soon.getStatus('old-done'))?.runtimeStatus).toBe('Completed');
      await soon.close();

      const later = await openDriver(reg, {
        dataFile: file,
        retentionMs: 60 * MINUTE,
        now: () => new Date(T0 + 120 * MINUTE),
      });
      expect(await later.getStatus('old-done')).toBeUndefined();
      // Only finished instances go: a running one is kept however old it is.
      expect((await later.getStatus('old-running'))?.runtimeStatus).toBe('Running');
      await later.close();
      expect(await savedRecord(file, 'old-done')).toBeUndefined();
      expect(await savedRecord(file, 'old-running')).toBeDefined();
    });

    it('purges on its timer while running', async () => {
      const file = join(dir, 'durable.json');
      let now = new Date(T0);
      const driver = await openDriver(registry({ quick }), {
        dataFile: file,
        now: () => now,
        retentionMs: 60 * MINUTE,
        purgeIntervalMs: 5,
      });
      await driver.startNew('quick', { instanceId: 'done-1' });
      await driver.waitForCompletion('done-1', WAIT_MS);
      await waitForSave(file, 'done-1', (r) => r.runtimeStatus === 'Completed');

      now = new Date(T0 + 61 * MINUTE);
      await eventually(async () => (await driver.getStatus('done-1')) === undefined);
      await eventually(async () => (await savedRecord(file, 'done-1')) === undefined);
    });

    it('applies to a memory-only driver too', async () => {
      let now = new Date(T0);
      const driver = await openDriver(registry({ quick }), {
        now: () => now,
        retentionMs: 60 * MINUTE,
        purgeIntervalMs: 5,
      });
      await driver.startNew('quick', { instanceId: 'mem-1' });
      await driver.waitForCompletion('mem-1', WAIT_MS);
      now = new Date(T0 + 61 * MINUTE);
      await eventually(async () => (await driver.getStatus('mem-1')) === undefined);
    });
  });

  describe('a data file that cannot be loaded', () => {
    const cases: [string, string][] = [
      ['is not JSON', '{"format": "local-durable-instances", '],
      [
        'has the wrong shape',
        JSON.stringify({
          format: 'local-durable-instances',
          version: 1,
          savedAt: '2026-03-01T10:00:00.000Z',
          instances: [{ instanceId: 'x', history: 'lost' }],
        }),
      ],
    ];

    it.each(cases)(
      'stops open() with CorruptDataFileError when it %s, and is left untouched',
      async (_, text) => {
        const file = join(dir, 'durable.json');
        await writeFile(file, text);

        const error: unknown = await LocalDurableDriver.open(registry({ chain }), {
          dataFile: file,
          logHandler: quiet,
        }).catch((e: unknown) => e);

        expect(error).toBeInstanceOf(CorruptDataFileError);
        expect((error as CorruptDataFileError).file).toBe(file);
        expect((error as Error).message).toContain(file);
        expect(await readFile(file, 'utf8')).toBe(text);
      },
    );

    it('refuses a file that holds one instance twice', async () => {
      const file = join(dir, 'durable.json');
      const first = await openDriver(registry({ chain }, { A: hangs() }), { dataFile: file });
      await first.startNew('chain', { instanceId: 'dup', input: 'x' });
      const saved = await savedRecord(file, 'dup');
      // A snapshot of the shape written before journals existed, holding the instance twice.
      const text = JSON.stringify({
        format: 'local-durable-instances',
        version: 1,
        savedAt: '2026-03-01T10:00:00.000Z',
        instances: [saved, saved],
      });
      const broken = join(dir, 'broken.json');
      await writeFile(broken, text);

      const error: unknown = await LocalDurableDriver.open(registry({ chain }), {
        dataFile: broken,
        logHandler: quiet,
      }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(CorruptDataFileError);
      expect((error as Error).message).toMatch(/instance 'dup' appears more than once/);
      expect(await readFile(broken, 'utf8')).toBe(text);
    });
  });
});
