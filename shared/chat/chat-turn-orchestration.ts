// The chatTurn orchestration: the LLM tool-calling loop of one chat message, run by Durable Functions. It is
// deterministic (it reads only its input and its activities' results) and passes ids, sequence numbers and
// small results between activities; prompts, model output and tool results stay in the hot store.
import * as df from 'durable-functions';
import {
  llmStepOutputSchema,
  prepareTurnOutputSchema,
  TOOL_ROUNDS_EXHAUSTED,
  TURN_ACTIVITIES,
  type ChatTurnInput,
  type CommitTurnInput,
  type FailTurnInput,
  type LlmStepInput,
  type LlmStepOutput,
  type PrepareTurnOutput,
  type RunToolInput,
  type TurnFailure,
  type TurnRef,
} from './contracts.js';

// Activities retry transient failures (a dependency blip); llmStep only throws when it has sent nothing.
const retry = (() => {
  const options = new df.RetryOptions(1_000, 3);
  options.backoffCoefficient = 2;
  return options;
})();

export function* chatTurnOrchestrator(context: df.OrchestrationContext): Generator<df.Task, string, unknown> {
  const input = context.df.getInput<ChatTurnInput>();
  const turn: TurnRef = {
    userId: input.userId,
    sessionId: input.sessionId,
    chatMessageId: input.chatMessageId,
  };
  let seq = 1;
  let stage: keyof typeof TURN_ACTIVITIES = 'prepare';
  try {
    const prepared: PrepareTurnOutput = prepareTurnOutputSchema.parse(
      yield context.df.callActivityWithRetry(TURN_ACTIVITIES.prepare, retry, input),
    );
    if (prepared.alreadyDone) return 'duplicate';
    seq = prepared.nextSeq;

    let toolRounds = 0;
    for (let round = 0; ; round++) {
      stage = 'llmStep';
      const stepInput: LlmStepInput = {
        ...turn,
        round,
        firstSeq: seq,
        toolsAllowed: toolRounds < input.maxToolRounds,
      };
      const step: LlmStepOutput = llmStepOutputSchema.parse(
        yield context.df.callActivityWithRetry(TURN_ACTIVITIES.llmStep, retry, stepInput),
      );
      seq = step.nextSeq;
      if (step.failure) return yield* fail(step.failure);

      if (step.toolCalls.length === 0) {
        stage = 'commit';
        yield context.df.callActivityWithRetry(TURN_ACTIVITIES.commit, retry, {
          ...turn,
          seq,
          finishReason:
            stepInput.toolsAllowed || step.finishReason !== 'tool_calls'
              ? step.finishReason
              : TOOL_ROUNDS_EXHAUSTED,
        } satisfies CommitTurnInput);
        return 'completed';
      }

      stage = 'runTool';
      // Each call owns one seq (its tool-result event), taken before they run: a failure lands after them all.
      const firstToolSeq = seq;
      seq += step.toolCalls.length;
      yield context.df.Task.all(
        step.toolCalls.map((call, position) =>
          context.df.callActivityWithRetry(TURN_ACTIVITIES.runTool, retry, {
            ...turn,
            round,
            index: call.index,
            seq: firstToolSeq + position,
          } satisfies RunToolInput),
        ),
      );
      toolRounds++;
    }
  } catch (error) {
    if (!context.df.isReplaying)
      context.error(`Turn ${input.chatMessageId} failed in ${TURN_ACTIVITIES[stage]}:`, error);
    return yield* fail(failureOf(stage));
  }

  function* fail(failure: TurnFailure): Generator<df.Task, string, unknown> {
    yield context.df.callActivityWithRetry(TURN_ACTIVITIES.fail, retry, {
      ...turn,
      seq,
      userText: input.text,
      postedAt: input.postedAt,
      failure,
    } satisfies FailTurnInput);
    return 'failed';
  }
}

/** What the client is told; the details stay in the logs. */
function failureOf(stage: keyof typeof TURN_ACTIVITIES): TurnFailure {
  if (stage === 'llmStep')
    return {
      code: 'llm_unavailable',
      message: 'The model did not answer. Your message is kept; send it again later.',
    };
  return {
    code: 'turn_failed',
    message: 'The answer could not be completed. Your message is kept; send it again later.',
  };
}
