// The chat turn's Durable side: the `user-messages` worker that starts (and waits for) the chatTurn
// orchestration, the orchestration itself, and its activities. Each entry only adapts the trigger to a
// use-case in shared/chat.
import type { InvocationContext } from '@azure/functions';
import type * as df from 'durable-functions';
import { parseInput, queuedChatMessageSchema } from '../shared/chat/chat-message.js';
import {
  CHAT_TURN_ORCHESTRATION,
  TURN_ACTIVITIES,
  chatTurnOrchestrator,
  type ChatTurnInput,
  type CommitTurnInput,
  type FailTurnInput,
  type LlmStepInput,
  type RunToolInput,
} from '../shared/chat/chat-turn-orchestration.js';
import { runQueuedTurn } from '../shared/chat/run-queued-turn.js';
import {
  commitTurn,
  failTurn,
  llmStep,
  prepareTurn,
  runTool,
  type TurnServices,
} from '../shared/chat/turn-steps.js';
import { getDependencies } from '../shared/dependencies.js';
import { USER_MESSAGES_QUEUE } from '../shared/resources.js';
import type { FunctionDefinition } from './definition.js';

export async function chatWorker(message: unknown, context: InvocationContext): Promise<void> {
  // A malformed message throws: it is redelivered and then dead-lettered with the reason, never dropped.
  const queued = parseInput(queuedChatMessageSchema, message, 'queued chat message');
  const { config, orchestrations } = await getDependencies();
  await runQueuedTurn(
    orchestrations(context),
    queued,
    { maxToolRounds: config.chat.maxToolRounds, waitMs: config.chat.turnWaitMs },
    context,
  );
}

async function services(context: InvocationContext): Promise<TurnServices> {
  const { chatTurn } = await getDependencies();
  return { ...chatTurn, log: context };
}

/** An activity entry: the durable input (JSON) handed to a use-case with the invocation's services. */
function activity<I>(
  name: string,
  step: (services: TurnServices, input: I) => Promise<unknown>,
): FunctionDefinition {
  const handler: df.ActivityHandler = async (input: unknown, context: InvocationContext) =>
    step(await services(context), input as I);
  return { kind: 'activity', name, handler };
}

export const chatTurnFunctions: FunctionDefinition[] = [
  {
    kind: 'serviceBus',
    name: 'chatWorker',
    source: { queueName: USER_MESSAGES_QUEUE },
    isSessionsEnabled: true,
    usesDurableClient: true,
    handler: chatWorker,
  },
  { kind: 'orchestration', name: CHAT_TURN_ORCHESTRATION, handler: chatTurnOrchestrator },
  activity<ChatTurnInput>(TURN_ACTIVITIES.prepare, prepareTurn),
  activity<LlmStepInput>(TURN_ACTIVITIES.llmStep, llmStep),
  activity<RunToolInput>(TURN_ACTIVITIES.runTool, runTool),
  activity<CommitTurnInput>(TURN_ACTIVITIES.commit, commitTurn),
  activity<FailTurnInput>(TURN_ACTIVITIES.fail, failTurn),
];
