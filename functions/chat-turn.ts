// The chat turn's Durable side: the `user-messages` worker that runs a turn's first round and starts (and waits
// for) the chatTurn orchestration, the orchestration itself, and its activities. Each entry only adapts the trigger
// to a use-case in shared/chat; every message and activity input is checked against its contract on the way in.
import type { InvocationContext } from '@azure/functions';
import type * as df from 'durable-functions';
import type { z } from 'zod';
import { getApp } from '../shared/app/app.js';
import { chatTurnOrchestrator } from '../shared/chat/turn/chat-turn-orchestration.js';
import {
  CHAT_TURN_ORCHESTRATION,
  failTurnInputSchema,
  llmStepInputSchema,
  parkTurnInputSchema,
  runToolInputSchema,
  TURN_ACTIVITIES,
  type LlmStepInput,
} from '../shared/chat/contracts/activities.js';
import { queuedChatMessageSchema, USER_MESSAGES_QUEUE } from '../shared/chat/contracts/queue.js';
import { parkTurn, resumeTurn } from '../shared/chat/approvals/park-turn.js';
import { runQueuedTurn } from '../shared/chat/turn/run-queued-turn.js';
import { failTurn } from '../shared/chat/turn/fail-turn.js';
import { llmStep } from '../shared/chat/turn/llm-step.js';
import { runTool } from '../shared/chat/turn/run-tool.js';
import type { TurnServices } from '../shared/chat/turn/turn-services.js';
import type { TurnRef } from '../shared/conversation/messages.js';
import { withUsage } from '../shared/usage/usage-scope.js';
import { parseInput } from '../shared/validation.js';
import type { FunctionDefinition } from './definition.js';
import { traceStep } from './traced-functions.js';

export async function chatWorker(message: unknown, context: InvocationContext): Promise<void> {
  // A malformed message throws: it is redelivered and then dead-lettered with the reason, never dropped.
  const queued = parseInput(queuedChatMessageSchema, message, 'queued chat message');
  const app = await getApp();
  const { chat } = app;
  // CHAT_FIRST_ROUND=worker: round 0 runs here as its activity would (the same use-case, counted under the same job,
  // so a round run again here or by the orchestration counts once, and in the same span).
  const firstRound =
    app.config.chat.firstRound === 'worker'
      ? (input: LlmStepInput) =>
          traceStep(TURN_ACTIVITIES.llmStep, input, undefined, () =>
            countedStep(input, roundJob, context, () => llmStep({ ...chat.turn, log: context }, input)),
          )
      : undefined;
  await runQueuedTurn(
    {
      orchestrations: app.orchestrations(context),
      sessions: chat.sessions,
      quota: app.quota,
      turns: chat.turn.turns,
      events: chat.turn.events,
      workingMemory: chat.turn.workingMemory,
      ...(firstRound ? { firstRound } : {}),
    },
    queued,
    { maxToolRounds: app.config.chat.maxToolRounds, waitMs: app.config.chat.turnWaitMs },
    context,
  );
}

/** The job a model round's calls are counted under (the same round run again counts once). */
const roundJob = (step: LlmStepInput) => `round:${step.round}`;

/** A step's model calls counted to its turn, under the job `job` names. */
function countedStep<I extends TurnRef, O>(
  input: I,
  job: (input: I) => string,
  log: InvocationContext,
  step: () => Promise<O>,
): Promise<O> {
  const { userId, sessionId, chatMessageId: turnId } = input;
  return withUsage({ userId, sessionId, turnId, job: job(input), log }, step);
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
    return countedStep(parsed, job, context, () => step({ ...chat.turn, log: context }, parsed));
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
  activity(TURN_ACTIVITIES.llmStep, llmStepInputSchema, llmStep, roundJob),
  activity(
    TURN_ACTIVITIES.runTool,
    runToolInputSchema,
    runTool,
    (tool) => `tool:${tool.round}:${tool.index}`,
  ),
  activity(TURN_ACTIVITIES.fail, failTurnInputSchema, failTurn, () => 'fail'),
  activity(TURN_ACTIVITIES.park, parkTurnInputSchema, parkTurn, () => 'park'),
  activity(TURN_ACTIVITIES.resume, parkTurnInputSchema, resumeTurn, () => 'resume'),
];
