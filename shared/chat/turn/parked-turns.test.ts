// The chat worker's wait for a turn that may park, and the session's next message denying a parked turn's approvals,
// against a scripted orchestration client and turn event store.
import { describe, expect, it } from 'vitest';
import type { OrchestrationClient, OrchestrationStatus } from '../../durable/orchestration-client.js';
import { OrchestrationWaitTimeout } from '../../durable/orchestration-client.js';
import type { ChatEvent } from '../../streaming/contracts.js';
import { AWAITING_APPROVAL } from '../contracts/activities.js';
import { MOVED_ON_REASON, moveOnFromParkedTurn, waitForEndOrPark } from './parked-turns.js';

const turn = { userId: 'user_001', sessionId: 's1', chatMessageId: 'parked' };

/** An instance whose status the test sets; its completion resolves once `end()` is called. */
function scriptedInstance() {
  let status: Partial<OrchestrationStatus> = { runtimeStatus: 'Running', customStatus: null };
  let ended: () => void = () => undefined;
  const completion = new Promise<void>((resolve) => (ended = resolve));
  const raised: { name: string; data: unknown }[] = [];
  const client = {
    getStatus: () => Promise.resolve(status as OrchestrationStatus),
    waitForCompletion: (instanceId: string, timeoutMs: number) =>
      Promise.race([
        completion.then(() => status as OrchestrationStatus),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new OrchestrationWaitTimeout(instanceId, timeoutMs)), timeoutMs),
        ),
      ]),
    raiseEvent: (_id: string, name: string, data: unknown) => {
      raised.push({ name, data });
      // The denied turn goes on, and ends.
      status = { runtimeStatus: 'Completed', customStatus: null };
      ended();
      return Promise.resolve();
    },
  } as unknown as OrchestrationClient;
  return {
    client,
    raised,
    park: () => (status = { runtimeStatus: 'Running', customStatus: { status: AWAITING_APPROVAL } }),
    end: () => {
      status = { runtimeStatus: 'Completed', customStatus: null };
      ended();
    },
  };
}

const request = (seq: number, approvalId: string, toolCallId: string): ChatEvent => ({
  type: 'tool-approval-request',
  round: 0,
  approvalId,
  toolCallId,
  toolName: 'mcp__files__rm',
  input: '{}',
  sessionId: turn.sessionId,
  chatMessageId: turn.chatMessageId,
  seq,
});

describe('a turn that waits for its user', () => {
  it('lets the worker go once it parks, and otherwise once it ends', async () => {
    const parks = scriptedInstance();
    const waiting = waitForEndOrPark(parks.client, 'i', 10_000, 5);
    parks.park();
    expect(await waiting).toBe('parked');

    const ends = scriptedInstance();
    const running = waitForEndOrPark(ends.client, 'i', 10_000, 5);
    ends.end();
    expect(await running).toBe('ended');
  });

  it("denies the parked turn's waiting approvals when the session's next message comes, once", async () => {
    const instance = scriptedInstance();
    instance.park();
    const events = [
      request(3, '0-0', 'c0'),
      request(4, '0-1', 'c1'),
      {
        ...request(5, 'x', 'c1'),
        type: 'tool-result',
        name: 'rm',
        result: '{}',
        isError: false,
      } as ChatEvent,
    ];
    const answered = new Set<string>();
    const log = { log: () => undefined, warn: () => undefined };
    const services = {
      orchestrations: instance.client,
      events: { read: () => Promise.resolve(events) },
      turns: {
        recordApprovalAnswer: (_turn: unknown, approvalId: string) => {
          const first = !answered.has(approvalId);
          answered.add(approvalId);
          return Promise.resolve(first);
        },
      },
    };
    const next = { ...turn, chatMessageId: 'next' };
    await moveOnFromParkedTurn(services, next, 'parked', 10_000, log);
    // Only 0-0 still waited (0-1's call has its result); it was denied and the turn ended before the next message.
    expect(instance.raised).toEqual([
      { name: 'approval:0-0', data: { approved: false, reason: MOVED_ON_REASON } },
    ]);
    // The turn's own message (a redelivery) and a session with no parked turn deny nothing.
    await moveOnFromParkedTurn(services, turn, 'parked', 10_000, log);
    await moveOnFromParkedTurn(services, next, undefined, 10_000, log);
    expect(instance.raised).toHaveLength(1);
  });
});
