// The runTool activity: one tool call of a round, run once (its result is stored, and a rerun sends the same
// `tool-result` event); a call of a stopped turn is not run but gets its result all the same.
import { memoryFlag } from '../contracts/queue.js';
import type { RunToolInput, RunToolOutput } from '../contracts/activities.js';
import { openStream } from './round-stream.js';
import { conversationDeleted, DELETED, stopRequested, unlessDeleted } from './step-guards.js';
import type { TurnServices } from './turn-services.js';

/** The result of a tool call its turn was stopped before it ran. */
const NOT_RUN = {
  result: JSON.stringify({ error: 'Not run: the user stopped the answer before this tool ran.' }),
  isError: true,
};

export async function runTool(services: TurnServices, input: RunToolInput): Promise<RunToolOutput> {
  const ran = await unlessDeleted(services, input, () => toolCall(services, input));
  // The orchestration's next round finds the conversation deleted too, and ends the turn.
  return ran === DELETED ? { isError: true } : ran;
}

async function toolCall(
  services: TurnServices,
  input: RunToolInput,
): Promise<RunToolOutput | typeof DELETED> {
  const turn = await services.turns.get(input);
  const call = turn?.rounds.find((round) => round.round === input.round)?.toolCalls[input.index];
  if (call === undefined)
    throw new Error(`Turn ${input.chatMessageId} has no tool call ${input.index} in round ${input.round}.`);
  const [done, stopped, deleted] = await Promise.all([
    services.turns.getToolResult(input, input.round, input.index),
    stopRequested(services, input),
    conversationDeleted(services, input),
  ]);
  // A deleted conversation's tool is not run, and nothing of it is stored.
  if (deleted) return DELETED;
  let stored = done;
  if (stored === undefined) {
    // A use_memory false turn is not offered the memory tools; the registry refuses a call to one anyway. A call
    // of a stopped turn is not run, but it gets its result (and its event, whose seq is reserved) all the same.
    const outcome = stopped
      ? NOT_RUN
      : await services.tools.execute(call, {
          userId: input.userId,
          sessionId: input.sessionId,
          chatMessageId: input.chatMessageId,
          ...memoryFlag(input),
          // The past-answer tools answer from the turn's own path, never from other branches.
          ...(turn?.branch ? { branch: turn.branch } : {}),
        });
    stored = {
      round: input.round,
      index: input.index,
      toolCallId: call.id,
      name: call.name,
      arguments: call.arguments,
      ...outcome,
    };
    await services.turns.putToolResult(input, stored);
  }
  // The event is the same however often this runs, so storing it again is a no-op.
  const stream = openStream(services, input, input.seq);
  stream.emit({
    type: 'tool-result',
    round: input.round,
    toolCallId: stored.toolCallId,
    name: stored.name,
    result: stored.result,
    isError: stored.isError,
  });
  await stream.close();
  return { isError: stored.isError };
}
