// The AI SDK's UI message stream protocol, beside our own: POST /api/ui/chat takes DefaultChatTransport's body and
// answers the turn as SSE chunks; GET /api/ui/chat/{id}/stream is useChat's resume (204 when no turn runs).
import { z } from 'zod';
import { attachmentBodyLimit } from '../shared/attachments/contracts.js';
import { chatBodyMaxBytes } from '../shared/chat/contracts/http.js';
import { HOST_REQUEST_BODY_BYTES } from '../shared/knowledge/settings.js';
import { postUiChat, resumeUiChat, type UiChatServices } from '../shared/chat/ui-chat.js';
import {
  UI_CHAT_BODY_MAX_BYTES,
  uiChatRequestSchema,
  uiMessageStreamSchema,
} from '../shared/chat/ui-chat-request.js';
import { UI_MESSAGE_STREAM_HEADERS } from '../shared/chat/ui-chat-stream.js';
import type { App } from '../shared/app/app.js';
import { sessionIdSchema } from '../shared/ids.js';
import { frontDoor } from './chat.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

export const postUiChatEndpoint = endpoint({
  name: 'postUiChat',
  route: 'ui/chat',
  methods: ['POST'],
  summary:
    "A useChat app's message (DefaultChatTransport's body {id, messages, trigger, messageId}): queued as POST /api/chat queues it, answered as the AI SDK's UI message stream. A last message that is the answer (`{chatMessageId}_assistant`) with tool parts in state approval-responded (addToolApprovalResponse) answers those approvals, and the same message goes on.",
  auth: 'caller',
  usesDurableClient: true,
  replies: { 200: { content: { 'text/event-stream': uiMessageStreamSchema } } },
  responses: {
    200: 'text/event-stream with `x-vercel-ai-ui-message-stream: v1`: `data:` one UI message chunk as JSON per frame, then `data: [DONE]`',
    404: "the chat `id` is another user's session, or a UUID no session of the caller has (or the message regenerate names is unknown)",
    409: 'the last message id was posted with another text, or the message to replace is not answered yet (with retry-after), or an approval the answer carries was already answered',
    429: 'a quota refuses a new message or answer (limit, allowed, current; retry-after): nothing was queued',
  },
  body: {
    schema: (app) => uiChatRequestSchema(app.config.chat.maxTextChars),
    // Room for a message's files as data: URLs (base64), up to the host's own limit.
    maxBytes: (app) =>
      Math.max(
        UI_CHAT_BODY_MAX_BYTES,
        chatBodyMaxBytes(app.config.chat.maxTextChars),
        Math.min(HOST_REQUEST_BODY_BYTES, attachmentBodyLimit(app.config.attachments.maxMessageBytes)),
      ),
    what: 'useChat request',
  },
  async handle({ app, caller, body, context }) {
    const approvals = { turns: app.chat.turn.turns, orchestrations: app.orchestrations(context) };
    const stream = await postUiChat({ ...services(app), approvals }, caller, body, (error) =>
      context.warn('UI message stream relay:', error),
    );
    return { status: 200, headers: { ...UI_MESSAGE_STREAM_HEADERS }, stream };
  },
});

export const resumeUiChatEndpoint = endpoint({
  name: 'resumeUiChat',
  route: 'ui/chat/{id}/stream',
  methods: ['GET'],
  summary:
    "useChat's resume: the session's running turn as a UI message stream from its start, without what a crash made it discard; 204 when no turn runs.",
  auth: 'caller',
  replies: { 200: { content: { 'text/event-stream': uiMessageStreamSchema } } },
  responses: {
    200: 'text/event-stream, as POST /api/ui/chat answers',
    204: 'no turn of the session is running (also for a 16-character chat id not used yet)',
    404: "another user's session, or a UUID no session of the caller has",
    429: 'STREAMS_PER_USER streams of the caller already open in this instance (limit, retry-after)',
  },
  params: z.object({ id: sessionIdSchema }),
  async handle({ app, caller, params, context }) {
    const stream = await resumeUiChat(services(app), caller, params.id, (error) =>
      context.warn('UI message stream relay:', error),
    );
    return stream === 'idle'
      ? { status: 204 }
      : { status: 200, headers: { ...UI_MESSAGE_STREAM_HEADERS }, stream };
  },
});

function services(app: App): UiChatServices {
  return {
    ...frontDoor(app),
    // The resume also reads a session's newest posted messages.
    posted: app.chat.posted,
    turnEvents: app.streaming.turnEvents,
    feed: app.streaming.feed,
    idleTimeoutMs: app.config.streaming.sseIdleTimeoutMs,
    openStreams: app.streaming.openStreams,
  };
}

export const uiChatFunctions: FunctionDefinition[] = [
  httpFunction(postUiChatEndpoint),
  httpFunction(resumeUiChatEndpoint),
];
