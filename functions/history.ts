// The history worker's trigger: each `message-completed` event on the `history` subscription (sessions on, so a
// conversation's turns arrive in order) is checked against its contract and handed to the persistTurn use-case.
import type { InvocationContext } from '@azure/functions';
import { getApp } from '../shared/app/app.js';
import { MESSAGE_COMPLETED_TOPIC, messageCompletedSchema } from '../shared/conversation/message-completed.js';
import { HISTORY_SUBSCRIPTION } from '../shared/history/contracts.js';
import { persistTurn } from '../shared/history/persist-turn.js';
import { groupsOf, withUsage } from '../shared/usage/usage-scope.js';
import { parseInput } from '../shared/validation.js';
import type { FunctionDefinition } from './definition.js';

export async function historyWorker(message: unknown, context: InvocationContext): Promise<void> {
  // A malformed event throws: it is redelivered and then dead-lettered with the reason, never dropped.
  const event = parseInput(messageCompletedSchema, message, 'message-completed event');
  const { history, usage } = await getApp();
  const { userId, sessionId, chatMessageId: turnId } = event;
  // The exchange's index, title and summary are folded into the turn's record, with the calls the turn's step handed
  // on in the event, in one write: each job once however often the event is delivered.
  await withUsage(
    {
      userId,
      ...groupsOf(event),
      sessionId,
      turnId,
      job: 'history',
      ...(event.usage ? { carried: event.usage } : {}),
      log: context,
    },
    () => persistTurn(history.worker, event, context),
    usage.recorder,
  );
}

export const historyFunctions: FunctionDefinition[] = [
  {
    kind: 'serviceBus',
    name: 'historyWorker',
    source: { topicName: MESSAGE_COMPLETED_TOPIC, subscriptionName: HISTORY_SUBSCRIPTION },
    isSessionsEnabled: true,
    handler: historyWorker,
  },
];
