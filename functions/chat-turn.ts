// The chat turn's Durable side: the `user-messages` worker that starts (and waits for) the chatTurn
// orchestration, the orchestration itself, and its activities. Each entry only adapts the trigger to a use-case
// in shared/chat; every message and activity input is checked against its contract on the way in.
import type { InvocationContext } from '@azure/functions';
import type * as df from 'durable-functions';
import type { z } from 'zod';
import { getApp } from '../shared/app/app.js';
import { chatTurnOrchestrator } from '../shared/chat/turn/chat-turn-orchestration.js';
import {
  CHAT_TURN_ORCHESTRATION,
  failTurnInputSchema,
  llmStepInputSchema,
  runToolInputSchema,
  TURN_ACTIVITIES,
} from '../shared/chat/contracts/activities.js';
import { queuedChatMessageSchema, USER_MESSAGES_QUEUE } from '../shared/chat/contracts/queue.js';
import { runQueuedTurn } from '../shared/chat/turn/run-queued-turn.js';
import { failTurn } from '../shared/chat/turn/fail-turn.js';
import { llmStep } from '../shared/chat/turn/llm-step.js';
import { runTool } from '../shared/chat/turn/run-tool.js';
import type { TurnServices } from '../shared/chat/turn/turn-services.js';
import type { TurnRef } from '../shared/conversation/messages.js';
import { withUsage } from '../shared/usage/usage-scope.js';
import { parseInput } from '../shared/validation.js';
import type { FunctionDefinition } from './definition.js';

export async function chatWorker(message: unknown, context: InvocationContext): Promise<void> {
  // A malformed message throws: it is redelivered and then dead-lettered with the reason, never dropped.
  const queued = parseInput(queuedChatMessageSchema, message, 'queued chat message');
  const app = await getApp();
  await runQueuedTurn(
    { orchestrations: app.orchestrations(context), sessions: app.chat.sessions, quota: app.quota },
    queued,
    { maxToolRounds: app.config.chat.maxToolRounds, waitMs: app.config.chat.turnWaitMs },
    context,
  );
}

/**
 * An activity entry: its durable input checked against the contract, then handed to a use-case, its model calls
 * counted to the turn as the job `job` names (the same round or tool call run again counts once).
 */
function activity<I extends TurnRef>(
  name: string,
  input: z.ZodType<I>,
  step: (services: TurnServices, input: I) => Promise<unknown>,
  job: (input: I) => string,
): FunctionDefinition {
  const handler: df.ActivityHandler = async (value: unknown, context: InvocationContext) => {
    const parsed = parseInput(input, value, `${name} input`);
    const { chat } = await getApp();
    const { userId, sessionId, chatMessageId: turnId } = parsed;
    return withUsage({ userId, sessionId, turnId, job: job(parsed), log: context }, () =>
      step({ ...chat.turn, log: context }, parsed),
    );
  };
  return { kind: 'activity', name, handler };
}

export const chatTurnFunctions: FunctionDefinition[] = [
  {
    kind: 'serviceBus',
    name: 'chatWorker',
    source: { queueName: USER_MESSAGES_QUEUE },
    isSessionsEnabled: true,
    usesDurableClient: true,
    continuesTrace: true,
    handler: chatWorker,
  },
  { kind: 'orchestration', name: CHAT_TURN_ORCHESTRATION, handler: chatTurnOrchestrator },
  activity(TURN_ACTIVITIES.llmStep, llmStepInputSchema, llmStep, (step) => `round:${step.round}`),
  activity(
    TURN_ACTIVITIES.runTool,
    runToolInputSchema,
    runTool,
    (tool) => `tool:${tool.round}:${tool.index}`,
  ),
  activity(TURN_ACTIVITIES.fail, failTurnInputSchema, failTurn, () => 'fail'),
];
