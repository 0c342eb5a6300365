// Which finished instances a purge may drop.
import { describe, expect, it } from 'vitest';
import { expiredInstanceIds, type InstanceRecord } from './instance-store.js';

function record(
  instanceId: string,
  runtimeStatus: InstanceRecord['runtimeStatus'],
  lastUpdatedTime: string,
): [string, InstanceRecord] {
  return [
    instanceId,
    {
      instanceId,
      executionId: `${instanceId}-exec`,
      name: 'orch',
      input: null,
      runtimeStatus,
      output: null,
      customStatus: null,
      createdTime: lastUpdatedTime,
      lastUpdatedTime,
      history: [],
      inbox: [],
    },
  ];
}

const OLD = '2026-03-01T08:00:00.000Z';
const NEW = '2026-03-01T11:00:00.000Z';
const CUT_OFF = new Date('2026-03-01T10:00:00.000Z');

describe('expiredInstanceIds', () => {
  it('picks finished instances last updated before the cut-off, and nothing unfinished', () => {
    const records = new Map([
      record('completed', 'Completed', OLD),
      record('failed', 'Failed', OLD),
      record('terminated', 'Terminated', OLD),
      record('recent', 'Completed', NEW),
      record('running', 'Running', OLD),
      record('pending', 'Pending', OLD),
    ]);

    expect(expiredInstanceIds(records, CUT_OFF)).toEqual(['completed', 'failed', 'terminated']);
  });
});
