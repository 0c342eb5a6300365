// The chat turn's trigger entries: a queue message or an activity input that breaks its contract is refused
// with a ValidationError (so Service Bus redelivers and then dead-letters it with the reason), before anything
// runs; a valid message starts the turn's orchestration under its per-session instance id.
import azureFunctions from '@azure/functions';
import type * as df from 'durable-functions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { provideApp } from '../shared/app/app.js';
import { TURN_ACTIVITIES } from '../shared/chat/contracts/activities.js';
import { turnInstanceId } from '../shared/conversation/turn-ids.js';
import { ValidationError } from '../shared/errors.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import type { LlmGateway } from '../shared/llm/llm-gateway.js';
import { SteppedModel } from '../test/support/stepped-model.js';
import { currentUsageScope } from '../shared/usage/usage-scope.js';
import { chatTurnFunctions, chatWorker } from './chat-turn.js';

const { InvocationContext } = azureFunctions;
const context = () => new InvocationContext({ invocationId: '1', functionName: 'test' });

const queued = {
  userId: 'user_001',
  sessionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  chatMessageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  text: 'hello',
  postedAt: '2026-11-22T10:00:00.000Z',
};

let app: TestApp;
/** The app the entries get, with the queued message's conversation in it. */
function useApp(testApp: TestApp): void {
  app = testApp;
  app.fakes.sessions.sessions.push({
    sessionId: queued.sessionId,
    userId: queued.userId,
    createdAt: '2026-11-22T09:00:00.000Z',
  });
  provideApp(() => Promise.resolve(app));
}
beforeEach(() => useApp(createTestApp({ settings: { CHAT_TURN_WAIT_MS: '0' } })));
afterEach(() => provideApp(() => Promise.reject(new Error('no app outside a test'))));

describe('chatWorker', () => {
  it('starts the turn under its session-scoped instance id (CHAT_FIRST_ROUND=orchestration)', async () => {
    useApp(createTestApp({ settings: { CHAT_TURN_WAIT_MS: '0', CHAT_FIRST_ROUND: 'orchestration' } }));
    await chatWorker(queued, context());
    const status = await app.fakes.orchestrations.getStatus(
      turnInstanceId(queued.sessionId, queued.chatMessageId),
    );
    expect(status).toMatchObject({ name: 'chatTurn', input: { ...queued, maxToolRounds: 10 } });
  });

  it('answers a turn without tools itself by default, starting no orchestration', async () => {
    const model = new SteppedModel([{ content: 'Hello there.' }]);
    // The usage attribution each model call is made under.
    const jobs: { turnId: string | undefined; job: string }[] = [];
    const llm = {
      streamChat: (...args: Parameters<SteppedModel['streamChat']>) => {
        const attribution = currentUsageScope()?.attribution;
        jobs.push({ turnId: attribution?.turnId, job: attribution?.job ?? 'none' });
        return model.streamChat(...args);
      },
    };
    useApp(createTestApp({ settings: { CHAT_TURN_WAIT_MS: '0' }, llm: llm as unknown as LlmGateway }));
    await chatWorker(queued, context());
    expect(model.requests).toHaveLength(1);
    expect(app.fakes.orchestrations.instances.size).toBe(0);
    expect([...app.fakes.events.stored.values()].map((e) => e.type)).toEqual([
      'message-start',
      'content',
      'content',
      'message-end',
    ]);
    // Counted under the job its activity uses, so round 0 run again by the orchestration counts once.
    expect(jobs).toEqual([{ turnId: queued.chatMessageId, job: 'round:0' }]);
  });

  it('starts nothing for a message whose conversation was deleted while it waited', async () => {
    await app.fakes.sessions.markDeleting(queued.userId, queued.sessionId);
    await chatWorker(queued, context());
    expect(app.fakes.orchestrations.instances.size).toBe(0);
  });

  it('refuses a message that breaks the user-messages contract, starting nothing', async () => {
    for (const message of [{ ...queued, sessionId: 'nope' }, { ...queued, text: '' }, 'hello', null]) {
      await expect(chatWorker(message, context())).rejects.toBeInstanceOf(ValidationError);
    }
    expect(app.fakes.orchestrations.instances.size).toBe(0);
  });
});

describe('the activities', () => {
  it('refuse an input that breaks their contract before calling the use-case', async () => {
    const step = chatTurnFunctions.find((f) => f.name === TURN_ACTIVITIES.llmStep);
    if (step?.kind !== 'activity') throw new Error('llmStep is not an activity');
    const handler = step.handler as (input: unknown, context: unknown) => Promise<unknown>;
    await expect(
      handler({ ...queued, round: 0, firstSeq: 0, toolsAllowed: true }, context()),
    ).rejects.toThrow(/Invalid llmStep input: firstSeq/);
    expect(app.fakes.workingMemory.messages).toEqual([]);
    expect(app.fakes.publisher.published).toEqual([]);
  });

  it('are all declared with an input contract', () => {
    const activities = chatTurnFunctions.filter(
      (f): f is { kind: 'activity'; name: string; handler: df.ActivityHandler } => f.kind === 'activity',
    );
    expect(activities.map((a) => a.name).sort()).toEqual(Object.values(TURN_ACTIVITIES).sort());
  });
});
