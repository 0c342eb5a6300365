// POST /api/v1/chat/completions' use-case: the request becomes a turn posted through the chat front door (quotas,
// idempotency, the queue and the worker as every turn), in a new temporary conversation whose context is the
// request's messages, or in the conversation x-conversation-id names; the answer is read from the turn's event log.
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { isAiSdkId } from '../ids.js';
import type { OrchestrationClient } from '../durable/orchestration-client.js';
import type { ConversationShape } from '../conversation/conversation-shape.js';
import type { TurnFork } from '../conversation/branches.js';
import type { WorkingMemoryStore } from '../conversation/working-memory-store.js';
import { narrowerMemoryMode, type MemoryMode } from '../conversation/memory-mode.js';
import { chooseModel } from '../models/model-catalogue.js';
import { postTurn, type PostChatMessageServices } from '../chat/post-chat-message.js';
import { scheduleTemporaryChatExpiry } from '../chat/temporary-chat-expiry.js';
import { splitMessages } from './completion-messages.js';
import { clientToolsOf } from './client-tools.js';
import type { CompletionStreamServices, TurnToFollow } from './completion-stream.js';
import type { ChatCompletionRequest, OpenAiHeaders } from './contracts.js';
import { resolveModelId, type ModelChoice, type ModelIdServices } from './model-ids.js';
import { keyedSessionId, turnMessageId } from './request-ids.js';

export interface ChatCompletionServices extends PostChatMessageServices, CompletionStreamServices {
  modelIds: ModelIdServices;
  /** Whether the turn runs a built-in tool of this name (a client's tool may not take it). */
  builtInTool: (name: string) => boolean;
  /** The shape an assistant gives a conversation (its instructions, model, memory), refused when not the caller's. */
  assistantShape: (caller: Caller, assistantId: string) => Promise<ConversationShape>;
  /** Where a temporary conversation's expiry job is started. */
  orchestrations: OrchestrationClient;
  temporaryTtlSeconds: number;
  /** Where a response named by previous_response_id is found on its conversation's path. */
  conversations: Pick<WorkingMemoryStore, 'load'>;
}

/** The turn a request posted, and what its answer names. */
export interface PostedCompletion extends TurnToFollow {
  /** The names of the client's tools: their calls are handed back. */
  clientTools: string[];
  /** The completion's id: `chatcmpl-` and the turn's session and message. */
  id: string;
  /** The model id the request named, echoed in every answer. */
  model: string;
  created: number;
}

export async function postChatCompletion(
  services: ChatCompletionServices,
  caller: Caller,
  request: ChatCompletionRequest,
  headers: OpenAiHeaders,
  fork?: TurnFork,
): Promise<PostedCompletion> {
  const clientTools = clientToolsOf(request.tools, services.builtInTool);
  const choice = await resolveModelId(services.modelIds, caller, request.model);
  const { text, context, followUp } = splitMessages(request.messages);
  if (headers.conversationId !== undefined && followUp.length > 0)
    throw new ValidationError(
      'Invalid chat completion request: tool results continue a request without x-conversation-id, whose messages are the whole context; in a kept conversation, send the results as a user message.',
      [{ path: 'messages', message: 'must end with a user message in a kept conversation' }],
    );
  const { sessionId, stateless } = await conversationFor(services, caller, headers, choice);
  const chatMessageId = turnMessageId(sessionId, headers.idempotencyKey);
  const { message } = await postTurn(services, caller, {
    sessionId,
    chatMessageId,
    text,
    useMemory: headers.memory !== 'off',
    memory: headers.memory,
    ...(choice.kind === 'model' ? { model: choice.model } : {}),
    // A stored conversation is its own context: only the newest message of the request is new to it.
    ...(stateless && context.length > 0 ? { context } : {}),
    ...(followUp.length > 0 ? { followUp } : {}),
    ...(clientTools === undefined ? {} : { clientTools }),
    ...(fork === undefined ? {} : { fork }),
  });
  return {
    userId: caller.userId,
    sessionId,
    chatMessageId,
    id: `chatcmpl-${sessionId}.${chatMessageId}`,
    model: request.model,
    clientTools: clientTools?.map((tool) => tool.name) ?? [],
    created: Math.floor(Date.parse(message.postedAt) / 1000),
  };
}

/**
 * The conversation a request's turn goes in: the caller's own that x-conversation-id names (a new id of 16 letters
 * and digits starts one, kept like any conversation), else a new temporary one, under an id derived from the
 * Idempotency-Key when there is one, so a retried request finds the same turn.
 */
async function conversationFor(
  services: ChatCompletionServices,
  caller: Caller,
  headers: OpenAiHeaders,
  choice: ModelChoice,
): Promise<{ sessionId: string; stateless: boolean }> {
  const { sessions } = services;
  const named = headers.conversationId;
  if (named !== undefined) {
    // A server-made id is read with the message's record by the front door (a missing one is its 404); a client-
    // chosen one is claimed, which finds the caller's own session in the same read.
    if (!isAiSdkId(named)) return { sessionId: named, stateless: false };
    const claimed = await sessions.claim(
      caller.userId,
      named,
      await shapeFor(services, caller, choice, undefined),
    );
    if (claimed === undefined)
      throw new NotFoundError(
        `No conversation '${named}' for this user: x-conversation-id names one of your conversations, or a new id of 16 letters and digits to start one.`,
      );
    return { sessionId: claimed.sessionId, stateless: false };
  }
  const shape = await shapeFor(services, caller, choice, headers.memory);
  const key = headers.idempotencyKey;
  const session =
    key === undefined
      ? await sessions.create(caller.userId, shape)
      : await sessions.claim(caller.userId, keyedSessionId(caller.userId, key), shape);
  if (session === undefined)
    throw new ConflictError('This Idempotency-Key was used for a request that is gone: send a new key.');
  try {
    // A temporary conversation is deleted everywhere once CHAT_TEMPORARY_TTL_SECONDS have passed.
    await scheduleTemporaryChatExpiry(services.orchestrations, session, services.temporaryTtlSeconds);
  } catch (error) {
    // A retried request (the same key) finds the job its first attempt started.
    if (!(error instanceof ConflictError)) throw error;
  }
  return { sessionId: session.sessionId, stateless: true };
}

/**
 * A new conversation's shape: the assistant's (its model, memory and instructions) or the model named; a temporary
 * one keeps the memory mode asked for (within the assistant's), a stored one lets each request's header decide.
 */
async function shapeFor(
  services: ChatCompletionServices,
  caller: Caller,
  choice: ModelChoice,
  temporaryMemory: MemoryMode | undefined,
): Promise<ConversationShape> {
  const resolved =
    choice.kind === 'assistant' ? await services.assistantShape(caller, choice.assistantId) : {};
  const catalogue = services.modelIds.models;
  const model =
    choice.kind === 'model' ? choice.model : chooseModel(catalogue, caller, undefined, resolved.model);
  if (temporaryMemory === undefined) return { ...resolved, model };
  const memory = narrowerMemoryMode(temporaryMemory, resolved.memory ?? 'readwrite');
  return { ...resolved, model, memory, temporary: true };
}
