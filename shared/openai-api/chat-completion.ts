// POST /api/v1/chat/completions' use-case: the request becomes a turn posted through the chat front door (quotas,
// idempotency, the queue and the worker as every turn), in a new temporary conversation whose context is the
// request's messages, or in the conversation x-conversation-id names; the answer is read from the turn's event log.
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  QuotaExceededError,
  ValidationError,
  type AppError,
} from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { isAiSdkId } from '../ids.js';
import type { OrchestrationClient } from '../durable/orchestration-client.js';
import type { ConversationShape } from '../conversation/conversation-shape.js';
import type { TurnFork } from '../conversation/branches.js';
import type { WorkingMemoryStore } from '../conversation/working-memory-store.js';
import { narrowerMemoryMode, type MemoryMode } from '../conversation/memory-mode.js';
import { chooseModel } from '../models/model-catalogue.js';
import { postTurn, requireReplaceable, type PostChatMessageServices } from '../chat/post-chat-message.js';
import { CLIENT_TOOL_CALLS } from '../chat/turn/client-tools.js';
import type { ChatMessage } from '../llm/llm-gateway.js';
import { scheduleTemporaryChatExpiry } from '../chat/temporary-chat-expiry.js';
import { assertResultsAnswerCalls, splitMessages } from './completion-messages.js';
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
  /** The longest text a message may have (CHAT_MAX_TEXT_CHARS), as POST /api/chat allows. */
  maxTextChars: number;
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

/** Where a request's turn goes in its kept conversation: on a branch, or in place of a turn that handed calls back. */
export interface TurnPlace {
  fork?: TurnFork | undefined;
  /** The turn whose client tool calls the request's results answer (absent: found by the calls' ids). */
  handedBack?: string | undefined;
  /** What answers when the conversation is another user's (absent: x-conversation-id's 404). */
  notFound?: (() => AppError) | undefined;
}

export async function postChatCompletion(
  services: ChatCompletionServices,
  caller: Caller,
  request: ChatCompletionRequest,
  headers: OpenAiHeaders,
  place: TurnPlace = {},
): Promise<PostedCompletion> {
  const clientTools = clientToolsOf(request.tools, services.builtInTool);
  const choice = await resolveModelId(services.modelIds, caller, request.model);
  const split = splitMessages(request.messages);
  // A kept conversation's calls are its stored turn's, checked when that turn is found.
  if (headers.conversationId === undefined) assertResultsAnswerCalls(request.messages);
  if (split.text.length > services.maxTextChars)
    throw new ValidationError(
      `Invalid chat completion request: the last user message has ${split.text.length} characters, more than the ${services.maxTextChars} a message may have (CHAT_MAX_TEXT_CHARS).`,
      [
        {
          path: 'messages',
          message: `the last user message may have at most ${services.maxTextChars} characters`,
        },
      ],
    );
  const { context, followUp } = split;
  const { sessionId, stateless } = await conversationFor(services, caller, headers, choice);
  // Tool results in a kept conversation: the turn that handed the calls back is answered anew with them.
  const handedBack =
    stateless || followUp.length === 0
      ? undefined
      : await handedBackTurn(services, caller, sessionId, followUp, place.handedBack).catch(
          (error: unknown) => {
            // Another user's conversation is not found, as the front door answers a post in it.
            if (!(error instanceof ForbiddenError)) throw error;
            throw place.notFound?.() ?? conversationNotFound(sessionId);
          },
        );
  const fork = handedBack?.fork ?? place.fork;
  const chatMessageId = turnMessageId(sessionId, headers.idempotencyKey);
  const turn = {
    sessionId,
    chatMessageId,
    text: handedBack?.text ?? split.text,
    useMemory: headers.memory !== 'off',
    memory: headers.memory,
    ...(choice.kind === 'model' ? { model: choice.model } : {}),
    // A stored conversation is its own context: only the newest message of the request is new to it.
    ...(stateless && context.length > 0 ? { context } : {}),
    ...(followUp.length > 0 ? { followUp: handedBack?.followUp ?? followUp } : {}),
    ...(clientTools === undefined ? {} : { clientTools }),
    ...(fork === undefined ? {} : { fork }),
    // A retry under the same Idempotency-Key is the same turn only when it repeats the whole request.
    ...(headers.idempotencyKey === undefined ? {} : { fingerprint: requestFingerprint(request) }),
  };
  const { message } = await postTurn(services, caller, turn).catch(async (error: unknown) => {
    // A stateless request the quotas refuse leaves no empty temporary conversation behind (its key's session is
    // its own: nothing else was posted in it).
    if (stateless && error instanceof QuotaExceededError)
      await services.sessions.release(caller.userId, sessionId);
    throw error;
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

/** The parts of a request beyond its last message that decide its answer: the messages, tools and model. */
function requestFingerprint(request: ChatCompletionRequest): string {
  return JSON.stringify([request.model, request.messages, request.tools ?? []]);
}

function conversationNotFound(sessionId: string): NotFoundError {
  return new NotFoundError(
    `No conversation '${sessionId}' for this user: x-conversation-id names one of your conversations, or a new id of 16 letters and digits to start one.`,
  );
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
    if (claimed === undefined) throw conversationNotFound(named);
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

/**
 * The turn of a kept conversation whose client tool calls a request's results answer: named, or the newest turn
 * that handed back one of the calls the follow-up repeats (one read of working memory). The new turn replaces it as
 * a regenerate does: its user message once on the path, the calls and results after it, then the new answer.
 */
async function handedBackTurn(
  services: ChatCompletionServices,
  caller: Caller,
  sessionId: string,
  followUp: readonly ChatMessage[],
  named: string | undefined,
): Promise<{ text: string; fork: TurnFork; followUp: ChatMessage[] }> {
  const callIds = followUp.flatMap((message) =>
    message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : [],
  );
  const turnId =
    named ??
    (await services.conversations.load(caller.userId, sessionId)).messages.findLast(
      (message) =>
        message.role === 'assistant' &&
        message.finishReason === CLIENT_TOOL_CALLS &&
        message.toolCalls?.some((call) => callIds.includes(call.id)) === true,
    )?.chatMessageId;
  if (turnId === undefined)
    throw new ValidationError(
      'Invalid chat completion request: no recent answer of this conversation handed back the tool calls these results answer.',
      [
        {
          path: 'messages',
          message: "tool results must answer the tool calls of the conversation's last answer",
        },
      ],
    );
  const { turn } = await requireReplaceable(services, caller, sessionId, turnId);
  const question = turn.messages.find((message) => message.role === 'user');
  if (question === undefined) throw new Error(`Turn ${turnId} has no user message.`);
  // Results alone (the Responses API's function_call_output items): the calls they answer come from the turn.
  const answered = followUp.flatMap((message) => (message.role === 'tool' ? [message.tool_call_id] : []));
  const stored = turn.messages.find((message) => message.role === 'assistant');
  const calls = (stored?.toolCalls ?? []).filter((call) => answered.includes(call.id));
  const asked: ChatMessage[] =
    followUp[0]?.role === 'tool' && calls.length > 0
      ? [
          {
            role: 'assistant',
            content: stored?.content ?? '',
            tool_calls: calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })),
          },
        ]
      : [];
  return {
    text: question.content,
    fork: { replaces: turnId, origin: 'regenerate' },
    followUp: [...asked, ...followUp],
  };
}
