// The chatTurn orchestration: the LLM tool-calling loop of one chat message, run by Durable Functions. Deterministic,
// it passes ids, sequence numbers and small results between activities; history, model output and tool results stay
// in the hot store. A turn answered without tools is one activity, which prepares, streams and commits it.
import * as df from 'durable-functions';
import {
  approvalAnswerSchema,
  approvalEventName,
  AWAITING_APPROVAL,
  MOVED_ON_REASON,
  parkTurnOutputSchema,
  resumeTurnOutputSchema,
  type ParkTurnInput,
  llmStepOutputSchema,
  runToolOutputSchema,
  type ApprovalAnswer,
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
      const toolInput = (index: number, toolSeq: number): RunToolInput => ({
        ...turn,
        round,
        index,
        seq: toolSeq,
        ...memory,
        // The memory tools read the scopes of the conversation's assistant and project.
        ...shapeFlags(input),
        ...groupsFlag(input),
        ...telemetry,
      });
      // A round whose every call is the client's runs none here (the next step hands them back).
      const ran =
        step.toolCalls.length === 0
          ? []
          : ((yield context.df.Task.all(
              step.toolCalls.map((call, position) =>
                context.df.callActivityWithRetry(
                  TURN_ACTIVITIES.runTool,
                  retry,
                  toolInput(call.index, firstToolSeq + position),
                ),
              ),
            )) as unknown[]);
      // Calls that need the user's yes asked for it (their reserved seq carried the request): the turn waits for
      // each answer, or its timeout, then runs or denies the call, whose result takes the next seq.
      const asked = ran.flatMap((output, position) => {
        const { approval } = runToolOutputSchema.parse(output);
        const call = step.toolCalls[position];
        return approval && call ? [{ index: call.index, ...approval }] : [];
      });
      for (const call of asked) {
        const approval = yield* awaitApproval(context, input, call);
        yield context.df.callActivityWithRetry(TURN_ACTIVITIES.runTool, retry, {
          ...toolInput(call.index, seq++),
          approval,
        } satisfies RunToolInput);
      }
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
 * Parks the turn until its user answers the call (or its timeout, a denial): its quota slot is given back and its
 * custom status tells the chat worker to let the session go. Then it takes a slot again, waiting on a timer for one.
 */
function* awaitApproval(
  context: df.OrchestrationContext,
  input: ChatTurnInput,
  call: { approvalId: string; timeoutSeconds: number },
): Generator<df.Task, ApprovalAnswer, unknown> {
  const park = { ...turnOf(input), ...quotaSlotFlag(input), ...telemetryOf(input) } satisfies ParkTurnInput;
  const parked = parkTurnOutputSchema.parse(
    yield context.df.callActivityWithRetry(TURN_ACTIVITIES.park, retry, park),
  );
  // A message posted before the session's mark: its worker waits for this turn, which goes on denied, holding all.
  if (parked.movedOn) return { approved: false, reason: MOVED_ON_REASON };
  context.df.setCustomStatus({ status: AWAITING_APPROVAL, approvalId: call.approvalId });
  const timer = context.df.createTimer(
    new Date(context.df.currentUtcDateTime.getTime() + call.timeoutSeconds * 1000),
  );
  const answer = context.df.waitForExternalEvent(approvalEventName(call.approvalId));
  const first: unknown = yield context.df.Task.any([answer, timer]);
  let approval: ApprovalAnswer;
  if (first === answer) {
    timer.cancel();
    approval = approvalAnswerSchema.parse(answer.result);
  } else approval = { approved: false, reason: 'no answer in time (timed out)' };
  context.df.setCustomStatus(null);
  for (;;) {
    const resumed = resumeTurnOutputSchema.parse(
      yield context.df.callActivityWithRetry(TURN_ACTIVITIES.resume, retry, park),
    );
    if (resumed.retryAfterSeconds === undefined) return approval;
    yield context.df.createTimer(
      new Date(context.df.currentUtcDateTime.getTime() + resumed.retryAfterSeconds * 1000),
    );
  }
}

function telemetryOf(input: ChatTurnInput): Pick<ParkTurnInput, 'telemetry'> {
  return input.telemetry ? { telemetry: input.telemetry } : {};
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
            ...(input.context ? { context: input.context } : {}),
            ...(input.followUp ? { followUp: input.followUp } : {}),
            ...(input.clientTools ? { clientTools: input.clientTools } : {}),
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
