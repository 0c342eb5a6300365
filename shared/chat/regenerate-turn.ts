// POST /api/chat/{sessionId}/{chatMessageId}/regenerate: a new answer to an earlier message, posted as the replaced
// turn's user text under the new id with its fork, so the earlier answer stays as an alternative. It keeps the
// replaced message's use_memory choice, and is idempotent as any post.
import type { Caller } from '../identity/caller.js';
import { ValidationError } from '../errors.js';
import {
  postTurn,
  requireReplaceable,
  type PostChatMessageServices,
  type PostedChatMessage,
} from './post-chat-message.js';
import { requireSession } from '../conversation/require-session.js';

export async function regenerateTurn(
  services: PostChatMessageServices,
  caller: Caller,
  target: { sessionId: string; chatMessageId: string },
  newChatMessageId: string,
  /** Another model of the catalogue for the new answer; absent: the conversation's. */
  model?: string,
): Promise<PostedChatMessage> {
  if (newChatMessageId === target.chatMessageId)
    throw new ValidationError(
      'Invalid regenerate request: chatMessageId must be a new id for the new answer.',
      [
        {
          path: 'chatMessageId',
          message: 'names the message being regenerated: give a new id for the new answer',
        },
      ],
    );
  await requireSession(services.sessions, caller, target.sessionId);
  const { turn, posted } = await requireReplaceable(services, caller, target.sessionId, target.chatMessageId);
  const question = turn.messages.find((message) => message.role === 'user');
  // findTurn gives a turn only with its user message; this guards the type.
  if (question === undefined) throw new Error(`Turn ${target.chatMessageId} has no user message.`);
  return postTurn(services, caller, {
    sessionId: target.sessionId,
    chatMessageId: newChatMessageId,
    text: question.content,
    useMemory: posted?.useMemory !== false,
    model,
    fork: { replaces: target.chatMessageId, origin: 'regenerate' },
    // The new answer sees the files the question carried.
    ...(question.attachments?.length ? { attachments: question.attachments } : {}),
  });
}
