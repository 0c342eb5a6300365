// The client's own tools (the OpenAI-compatible API): offered to the model beside the turn's, never run by it. A
// round that calls one runs the turn's own calls as usual, then the turn ends, handing the client's calls back.
import type { LlmReply } from '../../llm/llm-gateway.js';
import type { LlmStepOutput } from '../contracts/activities.js';
import type { RoundRecord, TurnRecord } from '../contracts/documents.js';

/** The finish reason of a turn that hands its client's tool calls back (as OpenAI's API names it). */
export const CLIENT_TOOL_CALLS = 'tool_calls';

/** The reply a turn ends with when it hands calls back: no text of its own, no call to run. */
export const HAND_BACK: LlmReply = {
  content: '',
  reasoning: '',
  toolCalls: [],
  finishReason: CLIENT_TOOL_CALLS,
};

export function isClientTool(record: Pick<TurnRecord, 'clientTools'> | undefined, name: string): boolean {
  return record?.clientTools?.some((tool) => tool.name === name) === true;
}

/** Whether the round before `round` called a client tool: then the turn ends instead of calling the model. */
export function handsBack(record: Pick<TurnRecord, 'clientTools' | 'rounds'>, round: number): boolean {
  const previous = record.rounds.find((recorded) => recorded.round === round - 1);
  return previous?.toolCalls.some((call) => isClientTool(record, call.name)) === true;
}

/** The output of a round that asked for tools: which calls the orchestration runs next (the client runs its own). */
export function toolsOutcome(round: RoundRecord, record?: Pick<TurnRecord, 'clientTools'>): LlmStepOutput {
  return {
    outcome: 'tools',
    nextSeq: round.nextSeq,
    toolCalls: round.toolCalls.flatMap((call, index) =>
      isClientTool(record, call.name) ? [] : [{ index, name: call.name }],
    ),
    finishReason: round.finishReason,
  };
}
