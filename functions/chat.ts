// POST /api/chat: validates a chat message and puts it on the `user-messages` queue; 202 once it is there.
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { postChatMessage } from '../shared/chat/post-chat-message.js';
import { getDependencies } from '../shared/dependencies.js';
import { readJsonBody } from '../shared/http/json-body.js';
import { toProblemResponse } from '../shared/http/problem.js';
import type { FunctionDefinition } from './definition.js';

/** Room for the longest text in UTF-8 (4 bytes a character at most) plus the other fields. */
const bodyLimit = (maxTextChars: number) => maxTextChars * 4 + 4 * 1024;

export async function postChat(request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> {
  try {
    const { config, identity, sessions, publisher } = await getDependencies();
    const caller = await identity.resolve(request.headers);
    const body = await readJsonBody(request, bodyLimit(config.chat.maxTextChars));
    const queued = await postChatMessage(
      { sessions, publisher, maxTextChars: config.chat.maxTextChars },
      caller,
      body,
    );
    const stream = `/api/stream/${queued.sessionId}/${queued.chatMessageId}`;
    return {
      status: 202,
      headers: { location: stream, 'cache-control': 'no-store' },
      jsonBody: {
        sessionId: queued.sessionId,
        chatMessageId: queued.chatMessageId,
        status: 'queued',
        stream,
      },
    };
  } catch (error) {
    return toProblemResponse(error, context, request.url);
  }
}

export const chatFunctions: FunctionDefinition[] = [
  { kind: 'http', name: 'postChat', route: 'chat', methods: ['POST'], handler: postChat },
];
