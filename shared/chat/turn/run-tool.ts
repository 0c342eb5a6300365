// The runTool activity: one tool call of a round, run once (its result is stored, and a rerun sends the same
// `tool-result` event); a call of a stopped turn is not run but gets its result all the same.
import type { RunToolInput, RunToolOutput } from '../contracts/activities.js';
import { groupsFlag } from '../contracts/queue.js';
import { serversFlag } from './round-stream.js';
import { conversationDeleted, stopRequested } from './step-guards.js';
import { decideTool, type ToolStep } from './tool-decision.js';
import { markingFailures } from './turn-failure.js';
import { DELETED, runTurnStep, type StepStart } from './turn-runner.js';
import type { ToolPorts } from './turn-services.js';

export async function runTool(services: ToolPorts, input: RunToolInput): Promise<RunToolOutput> {
  const ran = await markingFailures(() =>
    runTurnStep(services, input, () => readTool(services, input), decideTool),
  );
  // The orchestration's next round finds the conversation deleted too, and ends the turn.
  if (ran === DELETED) return { isError: true };
  if (ran === undefined)
    throw new Error(`Tool call ${input.index} of turn ${input.chatMessageId} decided no output.`);
  return ran;
}

async function readTool(services: ToolPorts, input: RunToolInput): Promise<StepStart<ToolStep>> {
  const turn = await services.turns.get(input);
  const call = turn?.rounds.find((round) => round.round === input.round)?.toolCalls[input.index];
  if (call === undefined)
    throw new Error(`Turn ${input.chatMessageId} has no tool call ${input.index} in round ${input.round}.`);
  const [done, stopped, deleted] = await Promise.all([
    services.turns.getToolResult(input, input.round, input.index),
    stopRequested(services, input),
    conversationDeleted(services, input),
  ]);
  // Only a user's MCP tool may need their yes, asked once: a call that has its answer is not asked again.
  const awaitsApproval =
    done === undefined && input.approval === undefined && services.userTools?.owns(call.name) === true
      ? await services.userTools.approval(call, {
          userId: input.userId,
          ...groupsFlag(input),
          ...serversFlag(turn?.tools),
        })
      : undefined;
  return { state: { input, turn, call, done, stopped, deleted, awaitsApproval }, firstSeq: input.seq };
}
