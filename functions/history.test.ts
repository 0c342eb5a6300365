// The history worker's trigger: an event that breaks the message-completed contract is refused with a
// ValidationError that names what is wrong (Service Bus redelivers it, then dead-letters it with that reason),
// before anything is written; a valid event is persisted through the app's history services.
import azureFunctions from '@azure/functions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { provideApp } from '../shared/app/app.js';
import { MESSAGE_COMPLETED_TOPIC } from '../shared/conversation/message-completed.js';
import { ValidationError } from '../shared/errors.js';
import { HISTORY_SUBSCRIPTION } from '../shared/history/contracts.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { completedExchange } from '../test/support/message-completed.js';
import { historyFunctions, historyWorker } from './history.js';

const { InvocationContext } = azureFunctions;
const context = () => new InvocationContext({ invocationId: '1', functionName: 'historyWorker' });

const userId = 'user_001';
const sessionId = '0f8fad5b-d9cb-469f-a165-70867728950e';
const chatMessageId = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const at = '2026-11-22T10:00:00.000Z';
const failedEvent = completedExchange({
  userId,
  sessionId,
  chatMessageId,
  ordinal: 0,
  question: 'hello',
  at,
});

let app: TestApp;
beforeEach(async () => {
  app = createTestApp();
  provideApp(() => Promise.resolve(app));
  await app.fakes.headers.touch({
    userId,
    sessionId,
    createdAt: at,
    lastActivity: at,
    messageCount: 1,
    preview: 'hello',
    firstUserText: 'hello',
  });
});
afterEach(() => provideApp(() => Promise.reject(new Error('no app outside a test'))));

describe('historyWorker', () => {
  it('is the session-enabled consumer of the history subscription', () => {
    expect(historyFunctions).toEqual([
      expect.objectContaining({
        kind: 'serviceBus',
        name: 'historyWorker',
        source: { topicName: MESSAGE_COMPLETED_TOPIC, subscriptionName: HISTORY_SUBSCRIPTION },
        isSessionsEnabled: true,
      }),
    ]);
  });

  it('persists a valid event', async () => {
    await historyWorker(failedEvent, context());
    expect(await app.fakes.longTermMessages.get(userId, sessionId, `${chatMessageId}_user`)).toMatchObject({
      failure: { code: 'model_unavailable' },
    });
    expect(await app.fakes.headers.get(userId, sessionId)).toMatchObject({ persistedCount: 1 });
  });

  it('refuses a malformed event with the reason, writing nothing', async () => {
    const cases: [unknown, RegExp][] = [
      [{ ...failedEvent, outcome: 'done' }, /Invalid message-completed event: outcome/],
      [{ ...failedEvent, completedAt: 'yesterday' }, /completedAt/],
      [{ ...failedEvent, messages: [{ ...failedEvent.messages[0], ordinal: -1 }] }, /messages\.0\.ordinal/],
      [{ ...failedEvent, complete: undefined }, /complete/],
      ['not an event', /Invalid message-completed event/],
      [null, /Invalid message-completed event/],
    ];
    for (const [message, reason] of cases) {
      const attempt = historyWorker(message, context());
      await expect(attempt).rejects.toBeInstanceOf(ValidationError);
      await expect(attempt).rejects.toThrow(reason);
    }
    expect(app.fakes.longTermMessages.items.size).toBe(0);
    expect(await app.fakes.headers.get(userId, sessionId)).toMatchObject({ persistedCount: 0 });
  });
});
