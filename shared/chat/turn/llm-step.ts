// The llmStep activity: one model round of the turn. It goes on from what an earlier attempt stored, streams the
// model's answer (voiding with `discard` what a died attempt had shown), then records the tool calls the model
// asked for, or commits the answer and ends the stream. Safe to run again at any point.
import type { LlmReply } from '../../llm/llm-gateway.js';
import { discardRange } from '../../streaming/turn-transcript.js';
import { turnMessagesIn } from '../../conversation/active-path.js';
import { assistantMessageId } from '../../conversation/turn-ids.js';
import { CANCELLED_FINISH_REASON, type LlmStepInput, type LlmStepOutput } from '../contracts/activities.js';
import type { TurnRecord } from '../contracts/documents.js';
import { finishCommitted, readRoundState } from './round-state.js';
import { openStream, stoppedRound, streamRound } from './round-stream.js';
import { conversationDeleted, DELETED, stopRequested, unlessDeleted } from './step-guards.js';
import { commitAnswer } from './turn-commit.js';
import type { RoundResult } from './turn-end.js';
import { showParentPath } from './turn-place.js';
import { promptOf } from './turn-prompt.js';
import { newTurnRecord, recordToolRound, toolsOutcome } from './turn-record.js';
import type { TurnServices } from './turn-services.js';
import { sourcesGrewIn, turnSources } from './turn-sources.js';

/**
 * One model round: streams the model's answer (or its tool calls) as events, then either records the tool calls
 * for the orchestration to run, or commits the turn and ends its stream. Safe to run again at any point.
 */
export async function llmStep(services: TurnServices, input: LlmStepInput): Promise<LlmStepOutput> {
  const round = await unlessDeleted(services, input, () => modelRound(services, input));
  if (round === DELETED)
    return { outcome: 'deleted', nextSeq: input.firstSeq, toolCalls: [], finishReason: 'deleted' };
  // Announced only once the conversation was seen to stand after every write of the step (the workers check again).
  await round.announce?.();
  return round.output;
}

async function modelRound(
  services: TurnServices,
  input: LlmStepInput,
): Promise<RoundResult | typeof DELETED> {
  // When the stop and the tombstone were read: the watch of the model stream reads them again an interval later.
  const checkedAt = Date.now();
  const [state, stopped, deleted] = await Promise.all([
    readRoundState(services, input),
    stopRequested(services, input),
    conversationDeleted(services, input),
  ]);
  // Deleted before the round began: no model call, and what the round wrote as it opened (message-start) is erased.
  if (deleted) return DELETED;
  const { turn } = state;

  const committed = turnMessagesIn(state.memory, input.chatMessageId).find(
    (message) => message.messageId === assistantMessageId(input.chatMessageId),
  );
  if (committed) return finishCommitted(services, input, state, committed);
  const recorded = turn?.rounds.find((round) => round.round === input.round);
  if (recorded) return { output: toolsOutcome(recorded) };

  // A new conversation's first round reads the profile (up to its budget), and a later round may move working memory
  // back to its path, between the step's check and the stream: then the watch reads at once as the stream opens.
  const preparedLong =
    (turn === undefined && state.memory.messageCount === 0) || turn?.branch?.parentChatMessageId;
  const record: TurnRecord = turn ?? (await newTurnRecord(services, input, state));
  // A later round's history is a range of the window, which holds the active path: should the user have switched
  // branches while tools ran, working memory moves back to the turn's path first (as its commit would).
  const parentId = turn?.branch?.parentChatMessageId;
  if (parentId) state.memory = await showParentPath(services, input, parentId, state.memory);
  const stream = openStream(services, input, state.nextSeq, state.sent);
  const { toolResults } = state;
  const sources = turnSources(toolResults);
  // What the last tool round added to the turn's sources goes out before the text that cites it (also when the turn
  // was stopped: the answer keeps the sources, so its clients see them), unless an earlier attempt of this round
  // sent it already. A round that found only chunks already listed, or none that fit the full list, sends nothing.
  if (sourcesGrewIn(toolResults, input.round - 1) && !state.stored.some((e) => e.type === 'sources'))
    stream.emit({ type: 'sources', sources });
  let reply: LlmReply;
  if (stopped) reply = stoppedRound(stream, state.stored);
  else {
    // What an earlier attempt of this round showed is voided before the round is streamed again.
    const voided = discardRange(state.stored);
    if (voided) stream.emit({ type: 'discard', ...voided });
    const messages = promptOf(state, record, toolResults);
    reply = await streamRound(services, input, stream, messages, preparedLong ? undefined : checkedAt);
    // Stopped while it streamed: the text so far is the answer, and tool calls it was making are not run.
    if (reply.finishReason === CANCELLED_FINISH_REASON) reply = { ...reply, toolCalls: [] };
  }

  // A reply cut at the token limit may have broken arguments and no room left: its text is the answer.
  const toolCalls = input.toolsAllowed && reply.finishReason !== 'length' ? reply.toolCalls : [];
  if (toolCalls.length > 0)
    return { output: await recordToolRound(services, input, record, { ...reply, toolCalls }, stream) };

  return commitAnswer(services, input, {
    record,
    reply,
    stream,
    memory: state.memory,
    toolResults,
    sources,
  });
}
