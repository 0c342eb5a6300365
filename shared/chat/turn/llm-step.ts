// The llmStep activity: one model round of the turn. It reads where the round stands, and carries out what the
// turn's decisions make of it: going on from what an earlier attempt stored, streaming the model's answer, then
// recording the tool calls the model asked for, or committing the answer and ending the stream.
import type { LlmStepInput, LlmStepOutput } from '../contracts/activities.js';
import { readRound } from './round-state.js';
import { decideRound } from './turn-decision.js';
import { markingFailures } from './turn-failure.js';
import { DELETED, runTurnStep, type TurnPorts } from './turn-runner.js';

/**
 * One model round: streams the model's answer (or its tool calls) as events, then either records the tool calls
 * for the orchestration to run, or commits the turn and ends its stream. Safe to run again at any point.
 */
export async function llmStep(services: TurnPorts, input: LlmStepInput): Promise<LlmStepOutput> {
  // What fails is marked with its class (model, storage, hot store, quota) for the turn's error event.
  const output = await markingFailures(() =>
    runTurnStep(services, input, () => readRound(services, input), decideRound),
  );
  if (output === DELETED)
    return { outcome: 'deleted', nextSeq: input.firstSeq, toolCalls: [], finishReason: 'deleted' };
  if (output === undefined)
    throw new Error(`Round ${input.round} of turn ${input.chatMessageId} decided no output.`);
  return output;
}
