// The worker's rule: one chatTurn per (session, message), started only when none exists (after the worker's own round
// 0 when that round asked for tools), and the message held until that turn has finished (or the wait runs out).
import { describe, expect, it, vi } from 'vitest';
import { ConflictError } from '../../errors.js';
import {
  OrchestrationWaitTimeout,
  type OrchestrationClient,
  type OrchestrationRuntimeStatus,
  type OrchestrationStatus,
} from '../../durable/orchestration-client.js';
import { turnInstanceId } from '../../conversation/turn-ids.js';
import type { LlmStepInput, LlmStepOutput } from '../contracts/activities.js';
import type { QueuedChatMessage } from '../contracts/queue.js';
import type { FoundTurn } from '../../conversation/active-path.js';
import { runQueuedTurn } from './run-queued-turn.js';
import { MemoryQuotaState } from '../../../test/support/in-memory-quota.js';
import { turnKey } from '../../quota/quota-state.js';
import type { QuotaConfig } from '../../quota/settings.js';

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

describe('runQueuedTurn with the first round in the worker', () => {
  const answered: LlmStepOutput = { outcome: 'answered', nextSeq: 6, toolCalls: [], finishReason: 'stop' };
  const tools: LlmStepOutput = {
    outcome: 'tools',
    nextSeq: 3,
    toolCalls: [{ index: 0, name: 'search_conversation_history' }],
    finishReason: 'tool_calls',
  };
  /** A round 0 that answers with `output` (or throws it), recording the inputs it got. */
  function round0(output: LlmStepOutput | Error) {
    const inputs: LlmStepInput[] = [];
    const run = (input: LlmStepInput) => {
      inputs.push(input);
      return output instanceof Error ? Promise.reject(output) : Promise.resolve(output);
    };
    return { inputs, run };
  }
  /** The worker reads no session in this mode: the step reads the tombstone itself. */
  const unread = { find: () => Promise.reject(new Error('the session is not read in this mode')) };

  it('answers a turn without tools itself: no orchestration, and round 0 gets the message', async () => {
    const client = fakeClient(undefined);
    const step = round0(answered);
    await expect(
      runQueuedTurn(
        { orchestrations: client, sessions: unread, firstRound: step.run },
        { ...message, useMemory: false },
        options,
        log,
      ),
    ).resolves.toBe('answered');
    expect(step.inputs).toEqual([
      {
        userId: message.userId,
        sessionId: message.sessionId,
        chatMessageId: message.chatMessageId,
        round: 0,
        firstSeq: 1,
        toolsAllowed: true,
        message: { text: message.text, postedAt: message.postedAt },
        useMemory: false,
      },
    ]);
    expect(client.getStatus).toHaveBeenCalledOnce();
    expect(client.startNew).not.toHaveBeenCalled();
    expect(client.waitForCompletion).not.toHaveBeenCalled();
  });

  it('ignores a re-post, past the duplicate-detection window, of a turn answered without an orchestration', async () => {
    // The first post was answered by the worker's round 0 long ago (no orchestration to find), and may have left
    // working memory's window since: its answer is found in the conversation, and nothing runs again.
    const client = fakeClient(undefined);
    const step = round0(answered);
    const found = { chatMessageId: message.chatMessageId, role: 'assistant' };
    const workingMemory = {
      findTurn: vi.fn(() =>
        Promise.resolve({
          messages: [{ messageId: `${message.chatMessageId}_assistant`, ...found }],
        } as unknown as FoundTurn),
      ),
    };
    await expect(
      runQueuedTurn(
        { orchestrations: client, sessions: unread, firstRound: step.run, workingMemory },
        message,
        options,
        log,
      ),
    ).resolves.toBe('already-finished');
    expect(step.inputs).toEqual([]);
    expect(workingMemory.findTurn).toHaveBeenCalledWith(
      message.userId,
      message.sessionId,
      message.chatMessageId,
    );
    expect(client.startNew).not.toHaveBeenCalled();

    // A message posted within the window is not looked up (Service Bus drops a re-post of it), and one whose turn
    // has no answer yet runs.
    workingMemory.findTurn.mockClear();
    const recent = { ...message, postedAt: new Date().toISOString() };
    await expect(
      runQueuedTurn(
        { orchestrations: client, sessions: unread, firstRound: step.run, workingMemory },
        recent,
        options,
        log,
      ),
    ).resolves.toBe('answered');
    expect(workingMemory.findTurn).not.toHaveBeenCalled();
    workingMemory.findTurn.mockResolvedValueOnce(undefined as unknown as FoundTurn);
    await expect(
      runQueuedTurn(
        { orchestrations: client, sessions: unread, firstRound: step.run, workingMemory },
        message,
        options,
        log,
      ),
    ).resolves.toBe('answered');
  });

  it('hands a turn whose model asked for tools to the orchestration with round 0 in its input, and waits', async () => {
    const client = fakeClient(undefined);
    const step = round0(tools);
    await expect(
      runQueuedTurn(
        { orchestrations: client, sessions: unread, firstRound: step.run },
        message,
        options,
        log,
      ),
    ).resolves.toBe('started');
    expect(client.startNew).toHaveBeenCalledWith('chatTurn', {
      instanceId,
      input: { ...message, maxToolRounds: 4, firstRound: tools },
    });
    expect(client.waitForCompletion).toHaveBeenCalledWith(instanceId, 1_000);
  });

  it('leaves a round 0 that failed to the orchestration, which runs it again under its retry policy', async () => {
    const client = fakeClient(undefined);
    const step = round0(new Error('the model is down'));
    await expect(
      runQueuedTurn(
        { orchestrations: client, sessions: unread, firstRound: step.run },
        message,
        options,
        log,
      ),
    ).resolves.toBe('started');
    expect(client.startNew).toHaveBeenCalledWith('chatTurn', {
      instanceId,
      input: { ...message, maxToolRounds: 4 },
    });
    expect(log.warn).toHaveBeenCalledWith(expect.stringContaining('round 0 failed'), expect.any(Error));
  });

  it('ends a turn whose conversation the step found deleted, starting nothing', async () => {
    const client = fakeClient(undefined);
    const step = round0({ outcome: 'deleted', nextSeq: 1, toolCalls: [], finishReason: 'deleted' });
    await expect(
      runQueuedTurn(
        { orchestrations: client, sessions: unread, firstRound: step.run },
        message,
        options,
        log,
      ),
    ).resolves.toBe('session-deleted');
    expect(client.startNew).not.toHaveBeenCalled();
  });

  it('runs no round for a message whose orchestration exists: it waits for a running one, ignores a finished one', async () => {
    for (const [state, outcome] of [
      ['Running', 'already-running'],
      ['Completed', 'already-finished'],
    ] as const) {
      const client = fakeClient(status(state));
      const step = round0(answered);
      await expect(
        runQueuedTurn(
          { orchestrations: client, sessions: unread, firstRound: step.run },
          message,
          options,
          log,
        ),
      ).resolves.toBe(outcome);
      expect(step.inputs).toEqual([]);
      expect(client.startNew).not.toHaveBeenCalled();
    }
  });

  it("frees the turn's quota slot once the worker's round answered it", async () => {
    const state = new MemoryQuotaState();
    const config: QuotaConfig = {
      concurrentTurns: 1,
      messagesPerMinute: 0,
      tokensPerDay: 0,
      costPerMonthUsd: 0,
      knowledgeBytes: 0,
      exempt: { users: [], groups: [] },
      leaseSeconds: 60,
    };
    const quota = { config, state };
    await state.takeTurnSlot({
      userId: message.userId,
      turn: turnKey(message),
      max: 1,
      leaseSeconds: 60,
      now: new Date(),
    });
    expect(state.running(message.userId)).toHaveLength(1);
    const step = round0(answered);
    await runQueuedTurn(
      { orchestrations: fakeClient(undefined), sessions: unread, firstRound: step.run, quota },
      message,
      options,
      log,
    );
    expect(state.running(message.userId)).toEqual([]);
  });
});
