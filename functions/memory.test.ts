// The memory worker's trigger: an event that breaks the message-completed contract is refused before anything is
// written, a valid one is consolidated through the app's memory services, and the delivery count decides whether
// a failing model is retried or the turn left out.
import azureFunctions from '@azure/functions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { provideApp } from '../shared/app/app.js';
import { MESSAGE_COMPLETED_TOPIC, type MessageCompleted } from '../shared/conversation/message-completed.js';
import { ValidationError } from '../shared/errors.js';
import { LlmError, type CompleteJsonRequest, type LlmGateway } from '../shared/llm/llm-gateway.js';
import { MODEL_DELIVERIES } from '../shared/memory/consolidate-turn.js';
import { MEMORY_SUBSCRIPTION } from '../shared/memory/contracts.js';
import { PROFILE_CHANGES_FORMAT } from '../shared/memory/memory-llm.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { completedExchange } from '../test/support/message-completed.js';
import { memoryFunctions, memoryWorker } from './memory.js';

const { InvocationContext } = azureFunctions;
const context = (deliveryCount?: number) =>
  new InvocationContext({
    invocationId: '1',
    functionName: 'memoryWorker',
    ...(deliveryCount === undefined ? {} : { triggerMetadata: { deliveryCount } }),
  });

const userId = 'user_001';
const chatMessageId = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const at = '2026-11-22T10:00:00.000Z';

/** Answers both memory formats; the profile call fails while `profileDown` is set. */
class FakeModel implements LlmGateway {
  profileDown = false;
  completeJson<T>(request: CompleteJsonRequest<T>): Promise<T> {
    if (request.name === PROFILE_CHANGES_FORMAT) {
      if (this.profileDown) return Promise.reject(new LlmError('model unavailable', { retryable: true }));
      return Promise.resolve(
        request.schema.parse({
          add: [{ category: 'interests', statement: 'The user likes tea.', evidence: 'I like tea' }],
          reaffirm: [],
          replace: [],
          retract: [],
        }),
      );
    }
    return Promise.resolve(
      request.schema.parse({
        summary: 'The user talked about tea.',
        themes: ['tea'],
        persons: [],
        places: [],
        user_sentiment: 'positive',
      }),
    );
  }
  embed(texts: string[]) {
    return Promise.resolve(texts.map(() => [1, 0]));
  }
  streamChat(): never {
    throw new Error('not used');
  }
  probe() {
    return Promise.resolve({ ok: true, detail: 'fake' });
  }
}

let app: TestApp;
let model: FakeModel;
let event: MessageCompleted;
beforeEach(async () => {
  model = new FakeModel();
  app = createTestApp({ llm: model });
  provideApp(() => Promise.resolve(app));
  const { sessionId } = await app.fakes.sessions.create(userId);
  event = completedExchange({
    userId,
    sessionId,
    chatMessageId,
    ordinal: 0,
    question: 'I like tea.',
    at,
    answer: { content: 'Tea is lovely.' },
  });
});
afterEach(() => provideApp(() => Promise.reject(new Error('no app outside a test'))));

const remembered = () =>
  app.fakes.summaries.documents.size + app.fakes.facts.facts.size + app.fakes.facts.records.size;

describe('memoryWorker', () => {
  it('is the session-enabled consumer of the memory subscription', () => {
    expect(memoryFunctions).toEqual([
      expect.objectContaining({
        kind: 'serviceBus',
        name: 'memoryWorker',
        source: { topicName: MESSAGE_COMPLETED_TOPIC, subscriptionName: MEMORY_SUBSCRIPTION },
        isSessionsEnabled: true,
      }),
    ]);
  });

  it("consolidates a valid event into the conversation's summary and the user's profile", async () => {
    await memoryWorker(event, context(1));
    expect(await app.memory.summaries.get(userId, String(event['sessionId']))).toMatchObject({
      summary: { summary: 'The user talked about tea.', coveredThrough: 1, exchanges: 1 },
    });
    expect((await app.memory.facts.list(userId)).map((fact) => fact.statement)).toEqual([
      'The user likes tea.',
    ]);
  });

  it(`retries a failing model until delivery ${MODEL_DELIVERIES}, then leaves the turn out of that part`, async () => {
    model.profileDown = true;
    await expect(memoryWorker(event, context())).rejects.toThrow('model unavailable');
    await expect(memoryWorker(event, context(MODEL_DELIVERIES - 1))).rejects.toThrow('model unavailable');
    await memoryWorker(event, context(MODEL_DELIVERIES));
    expect(app.fakes.summaries.documents.size).toBe(1);
    expect(app.fakes.facts.facts.size).toBe(0);
  });

  it('refuses a malformed event with the reason, writing nothing', async () => {
    const cases: [unknown, RegExp][] = [
      [{ ...event, outcome: 'done' }, /Invalid message-completed event: outcome/],
      [{ ...event, useMemory: 'no' }, /useMemory/],
      [{ ...event, messages: [{ role: 'user' }] }, /messages\.0/],
      [{ ...event, messages: [] }, /completed but does not carry the user's message and the answer/],
      ['not an event', /Invalid message-completed event/],
      [null, /Invalid message-completed event/],
    ];
    for (const [message, reason] of cases) {
      const attempt = memoryWorker(message, context());
      await expect(attempt).rejects.toBeInstanceOf(ValidationError);
      await expect(attempt).rejects.toThrow(reason);
    }
    expect(remembered()).toBe(0);
  });
});
