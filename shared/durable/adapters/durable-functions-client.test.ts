// The Azure adapter against a hand-written DurableClient fake that answers the way durable-functions
// 3.x does (its errors are the library's own messages for the extension's HTTP replies).
import type * as df from 'durable-functions';
import { describe, expect, it } from 'vitest';
import { ConflictError, DependencyError, NotFoundError } from '../../errors.js';
import { createDurableFunctionsClient, type DurableClientPort } from './durable-functions-client.js';
import { OrchestrationWaitTimeout } from '../orchestration-client.js';

type Call = [method: string, ...args: unknown[]];

class FakeDurableClient implements DurableClientPort {
  readonly calls: Call[] = [];
  readonly statuses = new Map<string, df.DurableOrchestrationStatus>();
  failNext: Error | undefined;

  startNew(name: string, options?: df.StartNewOptions): Promise<string> {
    this.calls.push(['startNew', name, options]);
    return this.#answer(options?.instanceId ?? 'generated');
  }

  getStatus(instanceId: string): Promise<df.DurableOrchestrationStatus> {
    this.calls.push(['getStatus', instanceId]);
    const status = this.statuses.get(instanceId);
    if (status === undefined) {
      // durable-functions' own message for the extension's 404.
      return Promise.reject(
        new Error(
          'DurableClient error: Durable Functions extension replied with HTTP 404 response. This usually means ' +
            `we could not find any data associated with the instanceId provided: ${instanceId}.`,
        ),
      );
    }
    return this.#answer(status);
  }

  raiseEvent(instanceId: string, eventName: string, eventData: unknown): Promise<void> {
    this.calls.push(['raiseEvent', instanceId, eventName, eventData]);
    return this.#answer(undefined);
  }

  terminate(instanceId: string, reason: string): Promise<void> {
    this.calls.push(['terminate', instanceId, reason]);
    return this.#answer(undefined);
  }

  purgeInstanceHistory(instanceId: string): Promise<df.PurgeHistoryResult> {
    this.calls.push(['purgeInstanceHistory', instanceId]);
    const deleted = this.statuses.delete(instanceId) ? 1 : 0;
    return this.#answer({ instancesDeleted: deleted });
  }

  #answer<T>(value: T): Promise<T> {
    const failure = this.failNext;
    this.failNext = undefined;
    return failure ? Promise.reject(failure) : Promise.resolve(value);
  }
}

function status(overrides: Partial<df.DurableOrchestrationStatus>): df.DurableOrchestrationStatus {
  return {
    name: 'chatTurn',
    instanceId: 'turn-1',
    createdTime: new Date('2026-01-02T03:04:05Z'),
    lastUpdatedTime: new Date('2026-01-02T03:04:06Z'),
    input: { chatMessageId: 'm1' },
    output: null,
    runtimeStatus: 'Running' as df.OrchestrationRuntimeStatus,
    customStatus: undefined,
    ...overrides,
  };
}

describe('createDurableFunctionsClient', () => {
  it('starts an orchestration with the given instance id and input', async () => {
    const fake = new FakeDurableClient();
    const client = createDurableFunctionsClient(fake);

    await expect(client.startNew('chatTurn', { instanceId: 'turn-1', input: { a: 1 } })).resolves.toBe(
      'turn-1',
    );
    expect(fake.calls).toEqual([['startNew', 'chatTurn', { instanceId: 'turn-1', input: { a: 1 } }]]);
  });

  it('maps the host refusing a running instance id to ConflictError', async () => {
    const fake = new FakeDurableClient();
    fake.failNext = new Error(
      'The operation failed with an unexpected status code: 500. Details: {"ExceptionMessage":"An Orchestration ' +
        'instance with the status Running already exists."}',
    );
    const client = createDurableFunctionsClient(fake);

    await expect(client.startNew('chatTurn', { instanceId: 'turn-1' })).rejects.toBeInstanceOf(ConflictError);
  });

  it('wraps other start failures as DependencyError with the cause', async () => {
    const fake = new FakeDurableClient();
    const cause = new Error('The operation failed with an unexpected status code: 503. Details: "busy"');
    fake.failNext = cause;
    const client = createDurableFunctionsClient(fake);

    const error = await client.startNew('chatTurn', { instanceId: 'turn-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect((error as DependencyError).message).toContain('status code: 503');
    expect((error as DependencyError).cause).toBe(cause);
  });

  it('returns undefined for an unknown instance (durable-functions throws on the 404)', async () => {
    const client = createDurableFunctionsClient(new FakeDurableClient());
    await expect(client.getStatus('nope')).resolves.toBeUndefined();
  });

  it('maps a status, including runtime statuses the port does not have', async () => {
    const fake = new FakeDurableClient();
    fake.statuses.set(
      'done',
      status({
        instanceId: 'done',
        runtimeStatus: 'Completed' as df.OrchestrationRuntimeStatus,
        output: 'hi',
      }),
    );
    fake.statuses.set(
      'paused',
      status({ instanceId: 'paused', runtimeStatus: 'Suspended' as df.OrchestrationRuntimeStatus }),
    );
    fake.statuses.set(
      'gone',
      status({ instanceId: 'gone', runtimeStatus: 'Canceled' as df.OrchestrationRuntimeStatus }),
    );
    fake.statuses.set(
      'odd',
      status({ instanceId: 'odd', runtimeStatus: 'Exploded' as df.OrchestrationRuntimeStatus }),
    );
    const client = createDurableFunctionsClient(fake);

    expect(await client.getStatus('done')).toEqual({
      instanceId: 'done',
      name: 'chatTurn',
      runtimeStatus: 'Completed',
      input: { chatMessageId: 'm1' },
      output: 'hi',
      customStatus: null,
      createdTime: new Date('2026-01-02T03:04:05Z'),
      lastUpdatedTime: new Date('2026-01-02T03:04:06Z'),
    });
    expect((await client.getStatus('paused'))?.runtimeStatus).toBe('Running');
    expect((await client.getStatus('gone'))?.runtimeStatus).toBe('Terminated');
    await expect(client.getStatus('odd')).rejects.toBeInstanceOf(DependencyError);
  });

  it('wraps other status failures as DependencyError', async () => {
    const fake = new FakeDurableClient();
    fake.statuses.set('turn-1', status({}));
    fake.failNext = new Error('The operation failed with an unexpected status code: 500. Details: {}');
    const client = createDurableFunctionsClient(fake);

    await expect(client.getStatus('turn-1')).rejects.toBeInstanceOf(DependencyError);
  });

  it('raises events and terminates, mapping an unknown instance to NotFoundError', async () => {
    const fake = new FakeDurableClient();
    const client = createDurableFunctionsClient(fake);

    await client.raiseEvent('turn-1', 'cancel', { by: 'user' });
    await client.terminate('turn-1', 'user cancelled');
    expect(fake.calls).toEqual([
      ['raiseEvent', 'turn-1', 'cancel', { by: 'user' }],
      ['terminate', 'turn-1', 'user cancelled'],
    ]);

    fake.failNext = new Error("No instance with ID 'x' found.");
    await expect(client.raiseEvent('x', 'cancel')).rejects.toBeInstanceOf(NotFoundError);
    fake.failNext = new Error("No instance with ID 'x' found.");
    await expect(client.terminate('x', 'why')).rejects.toBeInstanceOf(NotFoundError);
    fake.failNext = new Error('socket hang up');
    await expect(client.terminate('x', 'why')).rejects.toBeInstanceOf(DependencyError);
  });

  it('purges a finished instance, refuses a running one, and answers false for an unknown id', async () => {
    const fake = new FakeDurableClient();
    const client = createDurableFunctionsClient(fake);
    fake.statuses.set(
      'done',
      status({ instanceId: 'done', runtimeStatus: 'Completed' as df.OrchestrationRuntimeStatus }),
    );
    fake.statuses.set('busy', status({ instanceId: 'busy' }));

    await expect(client.purge('done')).resolves.toBe(true);
    await expect(client.purge('done')).resolves.toBe(false);
    await expect(client.purge('busy')).rejects.toBeInstanceOf(ConflictError);
    expect(fake.calls.filter(([method]) => method === 'purgeInstanceHistory')).toEqual([
      ['purgeInstanceHistory', 'done'],
    ]);

    fake.statuses.set(
      'failing',
      status({ instanceId: 'failing', runtimeStatus: 'Failed' as df.OrchestrationRuntimeStatus }),
    );
    const purge = client.purge('failing');
    fake.failNext = new Error('socket hang up'); // the status read has been sent; the purge call fails
    await expect(purge).rejects.toBeInstanceOf(DependencyError);
  });

  it('waits for completion by polling the status with a growing interval, and gives up at the timeout', async () => {
    let clock = 0;
    const sleeps: number[] = [];
    const fake = new FakeDurableClient();
    const client = createDurableFunctionsClient(fake, {
      now: () => clock,
      sleep: (ms) => {
        sleeps.push(ms);
        clock += ms;
        // The instance finishes while the third wait runs.
        if (sleeps.length === 3)
          fake.statuses.set(
            'turn',
            status({ instanceId: 'turn', runtimeStatus: 'Completed' as df.OrchestrationRuntimeStatus }),
          );
        return Promise.resolve();
      },
    });
    fake.statuses.set('turn', status({ instanceId: 'turn' }));
    await expect(client.waitForCompletion('turn', 10_000)).resolves.toMatchObject({
      runtimeStatus: 'Completed',
    });
    expect(sleeps).toEqual([100, 200, 400]);

    fake.statuses.set('stuck', status({ instanceId: 'stuck' }));
    sleeps.length = 0;
    await expect(client.waitForCompletion('stuck', 250)).rejects.toBeInstanceOf(OrchestrationWaitTimeout);
    expect(sleeps).toEqual([100, 150]);
    await expect(client.waitForCompletion('missing', 250)).rejects.toBeInstanceOf(NotFoundError);
  });
});
