// The turn's record as its first round begins it: the message, its place in the tree, its new conversation's prompt
// and the history range that fits the budget (a round is added each time the model asks for tools).
import { memoryFlag } from '../contracts/queue.js';
import type { LlmStepInput } from '../contracts/activities.js';
import type { TurnRecord } from '../contracts/documents.js';
import { buildPrompt } from '../prompt.js';
import { beginTurn } from './turn-place.js';
import { digestOnPath, newConversationPrompt, systemPromptText, type PromptState } from './turn-prompt.js';
import type { PlacePorts, TurnServices } from './turn-services.js';

/**
 * The record a turn starts from: the message, its place in the conversation's tree, its new conversation's prompt,
 * and which history of its path fits the budget. A fork may move working memory to its path (`state.memory`).
 */
export async function newTurnRecord(
  services: PlacePorts & Pick<TurnServices, 'profile' | 'settings' | 'now' | 'instructions'>,
  input: LlmStepInput,
  state: PromptState,
): Promise<TurnRecord> {
  if (input.message === undefined)
    throw new Error(`Round ${input.round} of turn ${input.chatMessageId} has no turn record to go on from.`);
  const placed = await beginTurn(services, input, input.message.fork, state.memory);
  state.memory = placed.memory;
  const { branch } = placed;
  const systemPrompt = await newConversationPrompt(services, input, state.memory);
  // The knowledge and the tools go with the prompt they were read with: this turn's, else the conversation's stored one.
  const { documentIds, tools } = systemPrompt ?? state.memory.systemPrompt ?? {};
  // The window holds the active path, which is now the one the turn follows; a fork of the conversation's first
  // turn follows none, so nothing of it is history.
  const opensTree = branch.parentChatMessageId === null && branch.origin !== undefined;
  // A turn that brings its own context (the OpenAI-compatible API) reads that, never the conversation's history.
  const context = input.message.context;
  const history =
    opensTree || context !== undefined
      ? []
      : state.memory.messages.filter((message) => message.chatMessageId !== input.chatMessageId);
  const digest = digestOnPath(state.digest, branch);
  const { history: range } = buildPrompt({
    systemPrompt: systemPromptText(state.memory, { systemPrompt }),
    history,
    ...(digest ? { digest } : {}),
    userText: input.message.text,
    tokenBudget: services.settings.promptTokenBudget,
    ...(services.settings.attachments === undefined ? {} : { attachments: services.settings.attachments }),
  });
  return {
    userId: input.userId,
    sessionId: input.sessionId,
    chatMessageId: input.chatMessageId,
    userText: input.message.text,
    ...(input.message.attachments?.length ? { attachments: input.message.attachments } : {}),
    postedAt: input.message.postedAt,
    history: range,
    rounds: [],
    ...(systemPrompt ? { systemPrompt } : {}),
    ...(documentIds === undefined ? {} : { documentIds }),
    ...(tools === undefined ? {} : { tools }),
    ...memoryFlag(input),
    branch,
    ...(context === undefined ? {} : { context }),
    ...(input.message.followUp === undefined ? {} : { followUp: input.message.followUp }),
    ...(input.message.clientTools === undefined ? {} : { clientTools: input.message.clientTools }),
  };
}
