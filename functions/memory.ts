// The memory worker's trigger: each `message-completed` event on the `memory` subscription (sessions on, so a
// conversation's turns are consolidated in order) is checked against its contract and handed to rememberTurn,
// with how often Service Bus has delivered it (the use-case gives a failing model a few deliveries, not all).
import type { InvocationContext } from '@azure/functions';
import { getApp } from '../shared/app/app.js';
import { MESSAGE_COMPLETED_TOPIC, messageCompletedSchema } from '../shared/conversation/message-completed.js';
import { rememberTurn } from '../shared/memory/remember-turn.js';
import { MEMORY_SUBSCRIPTION } from '../shared/memory/contracts.js';
import { groupsOf, withUsage } from '../shared/usage/usage-scope.js';
import { parseInput } from '../shared/validation.js';
import type { FunctionDefinition } from './definition.js';
import { deliveryCount } from './service-bus-delivery.js';

export async function memoryWorker(message: unknown, context: InvocationContext): Promise<void> {
  // A malformed event throws: it is redelivered and then dead-lettered with the reason, never dropped.
  const event = parseInput(messageCompletedSchema, message, 'message-completed event');
  const { memory } = await getApp();
  const { userId, sessionId, chatMessageId: turnId } = event;
  // The summary, its embedding and the profile changes are folded into the turn's record (which the history worker,
  // with fewer calls to make, has usually stored by then), once however often the event is delivered.
  await withUsage(
    { userId, ...groupsOf(event), sessionId, turnId, job: 'memory', late: true, log: context },
    () => rememberTurn(memory.worker, event, context, { deliveryCount: deliveryCount(context) }),
  );
}

export const memoryFunctions: FunctionDefinition[] = [
  {
    kind: 'serviceBus',
    name: 'memoryWorker',
    source: { topicName: MESSAGE_COMPLETED_TOPIC, subscriptionName: MEMORY_SUBSCRIPTION },
    isSessionsEnabled: true,
    handler: memoryWorker,
  },
];
