// The worker's rule: one chatTurn per (session, message), started only when none exists, and the message held
// until that turn has finished (or the wait runs out).
import { describe, expect, it, vi } from 'vitest';
import { ConflictError } from '../../errors.js';
import {
  OrchestrationWaitTimeout,
  type OrchestrationClient,
  type OrchestrationRuntimeStatus,
  type OrchestrationStatus,
} from '../../durable/orchestration-client.js';
import { turnInstanceId } from '../../conversation/turn-ids.js';
import type { QueuedChatMessage } from '../contracts/queue.js';
import { runQueuedTurn } from './run-queued-turn.js';

const message: QueuedChatMessage = {
  userId: 'user_001',
  sessionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  chatMessageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  text: 'hello',
  postedAt: '2026-11-21T10:00:00.000Z',
};
const instanceId = turnInstanceId(message.sessionId, message.chatMessageId);

function status(runtimeStatus: OrchestrationRuntimeStatus): OrchestrationStatus {
  const at = new Date(0);
  return {
    instanceId,
    name: 'chatTurn',
    runtimeStatus,
    input: null,
    output: null,
    customStatus: null,
    createdTime: at,
    lastUpdatedTime: at,
  };
}

function fakeClient(existing: OrchestrationStatus | undefined, overrides: Partial<OrchestrationClient> = {}) {
  return {
    startNew: vi.fn(() => Promise.resolve(instanceId)),
    getStatus: vi.fn(() => Promise.resolve(existing)),
    waitForCompletion: vi.fn(() => Promise.resolve(status('Completed'))),
    raiseEvent: vi.fn(() => Promise.resolve()),
    terminate: vi.fn(() => Promise.resolve()),
    purge: vi.fn(() => Promise.resolve(false)),
    ...overrides,
  } satisfies OrchestrationClient;
}

const log = { log: vi.fn(), warn: vi.fn() };
const session = {
  sessionId: message.sessionId,
  userId: message.userId,
  createdAt: '2026-11-21T09:00:00.000Z',
};
/** The session is there, as it is unless its conversation was deleted. */
const live = { find: () => Promise.resolve(session) };
const options = { maxToolRounds: 4, waitMs: 1_000 };

describe('runQueuedTurn', () => {
  it('starts the turn under the id of its session and message, with the tool round limit, and waits for it', async () => {
    const client = fakeClient(undefined);
    await expect(
      runQueuedTurn({ orchestrations: client, sessions: live }, message, options, log),
    ).resolves.toBe('started');
    expect(client.startNew).toHaveBeenCalledWith('chatTurn', {
      instanceId,
      input: { ...message, maxToolRounds: 4 },
    });
    expect(client.waitForCompletion).toHaveBeenCalledWith(instanceId, 1_000);
  });

  it.each(['Completed', 'Failed', 'Terminated'] as const)(
    'starts nothing for a message whose turn is %s',
    async (state) => {
      const client = fakeClient(status(state));
      await expect(
        runQueuedTurn({ orchestrations: client, sessions: live }, message, options, log),
      ).resolves.toBe('already-finished');
      expect(client.startNew).not.toHaveBeenCalled();
      expect(client.waitForCompletion).not.toHaveBeenCalled();
    },
  );

  it('waits for a turn that is still running (a redelivery after a crash), without starting another', async () => {
    const client = fakeClient(status('Running'));
    await expect(
      runQueuedTurn({ orchestrations: client, sessions: live }, message, options, log),
    ).resolves.toBe('already-running');
    expect(client.startNew).not.toHaveBeenCalled();
    expect(client.waitForCompletion).toHaveBeenCalledOnce();
  });

  it('treats losing the race to start as already running', async () => {
    const client = fakeClient(undefined, { startNew: () => Promise.reject(new ConflictError('running')) });
    await expect(
      runQueuedTurn({ orchestrations: client, sessions: live }, message, options, log),
    ).resolves.toBe('already-running');
    expect(client.waitForCompletion).toHaveBeenCalledOnce();
  });

  it('releases the session with a warning when the turn outlasts the wait, and rethrows other failures', async () => {
    const slow = fakeClient(undefined, {
      waitForCompletion: () => Promise.reject(new OrchestrationWaitTimeout(instanceId, 1_000)),
    });
    await expect(
      runQueuedTurn({ orchestrations: slow, sessions: live }, message, options, log),
    ).resolves.toBe('started');
    expect(log.warn).toHaveBeenCalledWith(expect.stringContaining('still running'));

    const broken = fakeClient(undefined, {
      startNew: () => Promise.reject(new Error('task hub unreachable')),
    });
    await expect(
      runQueuedTurn({ orchestrations: broken, sessions: live }, message, options, log),
    ).rejects.toThrow('task hub unreachable');
  });

  it('starts nothing for a message whose conversation was deleted while it waited', async () => {
    const client = fakeClient(undefined);
    const gone = { find: () => Promise.resolve(undefined) };
    await expect(
      runQueuedTurn({ orchestrations: client, sessions: gone }, message, options, log),
    ).resolves.toBe('session-deleted');
    expect(client.startNew).not.toHaveBeenCalled();
  });

  it('still waits for a turn that was running when its conversation was deleted (the delete stops it)', async () => {
    const client = fakeClient(status('Running'));
    const gone = { find: () => Promise.resolve(undefined) };
    await expect(
      runQueuedTurn({ orchestrations: client, sessions: gone }, message, options, log),
    ).resolves.toBe('already-running');
    expect(client.startNew).not.toHaveBeenCalled();
  });
});
