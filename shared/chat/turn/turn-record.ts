// The turn's record: begun by its first round (the message, its place in the tree, its new conversation's prompt
// and the history range that fits the budget), then a round added each time the model asks for tools.
import type { LlmReply } from '../../llm/llm-gateway.js';
import type { TurnStream } from '../../streaming/turn-stream.js';
import { memoryFlag } from '../contracts/queue.js';
import type { LlmStepInput, LlmStepOutput } from '../contracts/activities.js';
import type { RoundRecord, TurnRecord } from '../contracts/documents.js';
import { buildPrompt } from '../prompt.js';
import { beginTurn } from './turn-place.js';
import { digestOnPath, newConversationPrompt, systemPromptText, type PromptState } from './turn-prompt.js';
import type { TurnServices } from './turn-services.js';

/**
 * The record a turn starts from: the message, its place in the conversation's tree, its new conversation's prompt,
 * and which history of its path fits the budget. A fork may move working memory to its path (`state.memory`).
 */
export async function newTurnRecord(
  services: TurnServices,
  input: LlmStepInput,
  state: PromptState,
): Promise<TurnRecord> {
  if (input.message === undefined)
    throw new Error(`Round ${input.round} of turn ${input.chatMessageId} has no turn record to go on from.`);
  const placed = await beginTurn(services, input, input.message.fork, state.memory);
  state.memory = placed.memory;
  const { branch } = placed;
  const systemPrompt = await newConversationPrompt(services, input, state.memory);
  // The window holds the active path, which is now the one the turn follows; a fork of the conversation's first
  // turn follows none, so nothing of it is history.
  const opensTree = branch.parentChatMessageId === null && branch.origin !== undefined;
  const history = opensTree
    ? []
    : state.memory.messages.filter((message) => message.chatMessageId !== input.chatMessageId);
  const digest = digestOnPath(state.digest, branch);
  const { history: range } = buildPrompt({
    systemPrompt: systemPromptText(state.memory, { systemPrompt }),
    history,
    ...(digest ? { digest } : {}),
    userText: input.message.text,
    tokenBudget: services.settings.promptTokenBudget,
  });
  return {
    userId: input.userId,
    sessionId: input.sessionId,
    chatMessageId: input.chatMessageId,
    userText: input.message.text,
    postedAt: input.message.postedAt,
    history: range,
    rounds: [],
    ...(systemPrompt ? { systemPrompt } : {}),
    ...memoryFlag(input),
    branch,
  };
}

/** The output of a round that asked for tools: which calls the orchestration runs next. */
export function toolsOutcome(round: RoundRecord): LlmStepOutput {
  return {
    outcome: 'tools',
    nextSeq: round.nextSeq,
    toolCalls: round.toolCalls.map((call, index) => ({ index, name: call.name })),
    finishReason: round.finishReason,
  };
}

/**
 * Records a round whose reply asks for tools: its calls go out as `tool-call` events, then the round is added to the
 * turn's record, with the seq its tools' results take, for the orchestration to run them.
 */
export async function recordToolRound(
  services: TurnServices,
  input: LlmStepInput,
  record: TurnRecord,
  reply: LlmReply,
  stream: TurnStream,
): Promise<LlmStepOutput> {
  for (const call of reply.toolCalls)
    stream.emit({
      type: 'tool-call',
      round: input.round,
      toolCallId: call.id,
      name: call.name,
      arguments: call.arguments,
    });
  await stream.close();
  const round = await services.turns.addRound(record, {
    round: input.round,
    content: reply.content,
    reasoning: reply.reasoning,
    toolCalls: reply.toolCalls,
    finishReason: reply.finishReason,
    ...(reply.usage ? { usage: reply.usage } : {}),
    nextSeq: stream.nextSeq,
  });
  return toolsOutcome(round);
}
