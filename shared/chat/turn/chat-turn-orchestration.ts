// The chatTurn orchestration: the LLM tool-calling loop of one chat message, run by Durable Functions. Deterministic,
// it passes ids, sequence numbers and small results between activities; history, model output and tool results stay
// in the hot store. A turn answered without tools is one activity, which prepares, streams and commits it.
import * as df from 'durable-functions';
import {
  llmStepOutputSchema,
  TURN_ACTIVITIES,
  type ChatTurnInput,
  type FailTurnInput,
  type LlmStepInput,
  type LlmStepOutput,
  type RunToolInput,
} from '../contracts/activities.js';
import {
  groupsFlag,
  memoryFlag,
  modelFlag,
  quotaSlotFlag,
  shapeFlags,
  temporaryFlag,
} from '../contracts/queue.js';
import type { TurnRef } from '../../conversation/messages.js';
import type { TurnFork } from '../../conversation/branches.js';
import { turnFailureOf } from './turn-failure.js';

// Activities retry transient failures (a dependency blip, a broken model stream: the round is streamed anew).
const retry = (() => {
  const options = new df.RetryOptions(1_000, 3);
  options.backoffCoefficient = 2;
  return options;
})();

/**
 * A stop of the turn by its owner needs no external event here: the steps read it before each round and tool call
 * and while the model streams, and end the turn themselves (an event cannot interrupt a running activity, and an
 * orchestration that moved on without its step would leave two writers of the turn's stream).
 */
export function* chatTurnOrchestrator(context: df.OrchestrationContext): Generator<df.Task, string, unknown> {
  const input = context.df.getInput<ChatTurnInput>();
  const turn = turnOf(input);
  // Every activity is told when the turn must leave long-term memory alone (absent means it may use it).
  const memory = memoryFlag(input);
  // The worker's trace context goes to every activity, whose spans join the turn's trace (none is opened here:
  // the orchestrator replays).
  const telemetry = input.telemetry ? { telemetry: input.telemetry } : {};
  let seq = 1;
  let stage: 'llmStep' | 'runTool' | undefined;
  try {
    let toolRounds = 0;
    for (let round = 0; ; round++) {
      stage = 'llmStep';
      // Round 0 the chat worker ran already is in the input (replays see the same): its tool calls come next.
      let step: LlmStepOutput;
      if (round === 0 && input.firstRound) step = input.firstRound;
      else
        step = llmStepOutputSchema.parse(
          yield context.df.callActivityWithRetry(
            TURN_ACTIVITIES.llmStep,
            retry,
            llmStepInputOf(input, { round, firstSeq: seq, toolRounds }),
          ),
        );
      seq = step.nextSeq;
      if (step.outcome === 'answered') return 'completed';
      // The conversation was deleted while the turn ran: the step kept nothing, and there is nothing to fail.
      if (step.outcome === 'deleted') return 'deleted';

      stage = 'runTool';
      // Each call owns one seq (its tool-result event), taken before they run.
      const firstToolSeq = seq;
      seq += step.toolCalls.length;
      yield context.df.Task.all(
        step.toolCalls.map((call, position) =>
          context.df.callActivityWithRetry(TURN_ACTIVITIES.runTool, retry, {
            ...turn,
            round,
            index: call.index,
            seq: firstToolSeq + position,
            ...memory,
            // The memory tools read the scopes of the conversation's assistant and project.
            ...shapeFlags(input),
            ...groupsFlag(input),
            ...telemetry,
          } satisfies RunToolInput),
        ),
      );
      toolRounds++;
    }
  } catch (error) {
    if (!context.df.isReplaying)
      context.error(`Turn ${input.chatMessageId} failed in ${TURN_ACTIVITIES[stage ?? 'llmStep']}:`, error);
    yield context.df.callActivityWithRetry(TURN_ACTIVITIES.fail, retry, {
      ...turn,
      userText: input.text,
      postedAt: input.postedAt,
      failure: turnFailureOf(error),
      ...memory,
      ...temporaryFlag(input),
      ...quotaSlotFlag(input),
      ...forkOf(input),
      ...telemetry,
    } satisfies FailTurnInput);
    return 'failed';
  }
}

/**
 * The input of the turn's llmStep for a round: round 0 also gets the user's message (it prepares the turn). The chat
 * worker builds round 0's with it too when it runs that round itself, so both paths ask the same of the step.
 */
export function llmStepInputOf(
  input: ChatTurnInput,
  at: { round: number; firstSeq: number; toolRounds: number },
): LlmStepInput {
  const { round } = at;
  return {
    ...turnOf(input),
    round,
    firstSeq: at.firstSeq,
    toolsAllowed: at.toolRounds < input.maxToolRounds,
    ...(round === 0
      ? {
          message: {
            text: input.text,
            postedAt: input.postedAt,
            ...forkOf(input),
            ...(input.attachments ? { attachments: input.attachments } : {}),
          },
        }
      : {}),
    // Round 0 renders their instructions; the round that commits files a new conversation's header in the project.
    ...shapeFlags(input),
    ...memoryFlag(input),
    ...modelFlag(input),
    ...temporaryFlag(input),
    ...quotaSlotFlag(input),
    ...groupsFlag(input),
    ...(input.telemetry ? { telemetry: input.telemetry } : {}),
  };
}

function turnOf(input: ChatTurnInput): TurnRef {
  return { userId: input.userId, sessionId: input.sessionId, chatMessageId: input.chatMessageId };
}

/** An edit's or a regenerate's fork, for the steps that place the turn in the conversation's tree. */
function forkOf(input: ChatTurnInput): { fork?: TurnFork } {
  return input.fork ? { fork: input.fork } : {};
}
