// POST /api/v1/responses' use-case: the Responses API over the same turn as chat completions. A response id names
// its turn (`resp_<sessionId>.<chatMessageId>`), so previous_response_id continues that conversation.
import { AppError, ConflictError, ForbiddenError } from '../errors.js';
import type { TurnFork } from '../conversation/branches.js';
import type { Caller } from '../identity/caller.js';
import { isId } from '../ids.js';
import { postChatCompletion, type ChatCompletionServices, type PostedCompletion } from './chat-completion.js';
import type { CompletionMessage, OpenAiHeaders } from './contracts.js';
import type { CreateResponseRequest, ResponseInputItem } from './responses-contracts.js';

export class PreviousResponseNotFoundError extends AppError {
  constructor(id: string) {
    super(
      'previous_response_not_found',
      `No response '${id}' for this user: previous_response_id names a response this API gave you.`,
      404,
    );
  }
}

export interface PostedResponse extends PostedCompletion {
  previousResponseId: string | null;
}

/** The response id of a turn. */
export function responseIdOf(turn: { sessionId: string; chatMessageId: string }): string {
  return `resp_${turn.sessionId}.${turn.chatMessageId}`;
}

/** The turn a response id names; anything that is not one of ours is not found. */
export function turnOfResponse(id: string): { sessionId: string; chatMessageId: string } {
  const [sessionId, chatMessageId, ...rest] = id.startsWith('resp_') ? id.slice(5).split('.') : [];
  if (
    sessionId === undefined ||
    chatMessageId === undefined ||
    rest.length > 0 ||
    !isId('sessionId', sessionId) ||
    !isId('chatMessageId', chatMessageId)
  )
    throw new PreviousResponseNotFoundError(id);
  return { sessionId, chatMessageId };
}

/**
 * Where a turn that follows the named response goes: after the conversation's newest turn, nowhere special; after an
 * older one on its current path, on a new branch there (the named turn's next turn is replaced, as an edit does).
 */
async function branchAfter(
  services: Pick<ChatCompletionServices, 'conversations'>,
  caller: Caller,
  id: string,
): Promise<TurnFork | undefined> {
  const { sessionId, chatMessageId } = turnOfResponse(id);
  let messages;
  try {
    ({ messages } = await services.conversations.load(caller.userId, sessionId));
  } catch (error) {
    if (error instanceof ForbiddenError) throw new PreviousResponseNotFoundError(id);
    throw error;
  }
  // No conversation of the caller's: the front door answers 404 for it.
  if (messages.length === 0) return undefined;
  const answer = messages.findIndex(
    (message) => message.chatMessageId === chatMessageId && message.role === 'assistant',
  );
  if (answer === -1)
    throw new ConflictError(
      `Response '${id}' is not on its conversation's current path among its recent turns: continue from a newer response.`,
    );
  const next = messages[answer + 1];
  return next === undefined ? undefined : { replaces: next.chatMessageId, origin: 'edit' };
}

/**
 * The request's input as chat messages: `instructions` as a system message first, then each item (a function call
 * joins the assistant message of the calls before it, its output is a tool message).
 */
export function inputMessages(
  request: Pick<CreateResponseRequest, 'input' | 'instructions'>,
): CompletionMessage[] {
  const items: ResponseInputItem[] =
    typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
  const messages: CompletionMessage[] =
    request.instructions === undefined || request.instructions === null
      ? []
      : [{ role: 'system', content: request.instructions }];
  for (const item of items) {
    if ('role' in item) {
      const content =
        typeof item.content === 'string'
          ? item.content
          : item.content.map((part) => ({ type: 'text' as const, text: part.text }));
      messages.push({ role: item.role, content });
    } else if (item.type === 'function_call') {
      const call = {
        id: item.call_id,
        type: 'function' as const,
        function: { name: item.name, arguments: item.arguments },
      };
      const last = messages.at(-1);
      if (last?.role === 'assistant' && last.tool_calls !== undefined) last.tool_calls.push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else messages.push({ role: 'tool', tool_call_id: item.call_id, content: item.output });
  }
  return messages;
}

/**
 * Posts the response's turn: with previous_response_id, in that response's conversation (whose history is the
 * context: the input adds to it); without, in a new temporary conversation whose context is the input.
 */
export async function postResponse(
  services: ChatCompletionServices,
  caller: Caller,
  request: CreateResponseRequest,
  headers: OpenAiHeaders,
): Promise<PostedResponse> {
  const previous = request.previous_response_id ?? undefined;
  const conversationId = previous === undefined ? headers.conversationId : turnOfResponse(previous).sessionId;
  // Function call outputs answer the named response's calls: its turn is answered anew with them.
  const answersCalls =
    typeof request.input !== 'string' &&
    request.input.some((item) => 'type' in item && item.type === 'function_call_output');
  const handedBack =
    previous !== undefined && answersCalls ? turnOfResponse(previous).chatMessageId : undefined;
  const fork =
    previous === undefined || handedBack !== undefined
      ? undefined
      : await branchAfter(services, caller, previous);
  const messages = inputMessages(request);
  // Results alone carry no user message: the turn they answer gives it.
  if (handedBack !== undefined && !messages.some((message) => message.role === 'user'))
    messages.splice(
      Math.max(
        0,
        messages.findIndex((message) => message.role !== 'system'),
      ),
      0,
      { role: 'user', content: '(the message of the response named)' },
    );
  const posted = await postChatCompletion(
    services,
    caller,
    {
      model: request.model,
      messages,
      ...(request.tools === undefined
        ? {}
        : {
            tools: request.tools.map((tool) => ({
              type: 'function' as const,
              function: {
                name: tool.name,
                ...(tool.description ? { description: tool.description } : {}),
                ...(tool.parameters ? { parameters: tool.parameters } : {}),
              },
            })),
          }),
    },
    { ...headers, conversationId },
    {
      fork,
      handedBack,
      notFound: previous === undefined ? undefined : () => new PreviousResponseNotFoundError(previous),
    },
  );
  return { ...posted, id: responseIdOf(posted), previousResponseId: previous ?? null };
}
