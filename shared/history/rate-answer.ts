// The owner rates an answer (thumbs up or down) or takes the rating back; the rating is kept on the answer's stored
// message, so history returns it with the message.
import { NotFoundError, NotReadyError, ValidationError } from '../errors.js';
import type { AnswerFeedback, FeedbackReply } from './contracts.js';
import type { HistoryReadServices } from './conversation-reads.js';
import { pendingMemory, requireHeader, unpersistedMessages } from './conversation-reads.js';

export async function rateAnswer(
  services: Pick<HistoryReadServices, 'headers' | 'messages' | 'workingMemory'>,
  userId: string,
  sessionId: string,
  chatMessageId: string,
  rating: AnswerFeedback['rating'] | null,
  now: Date,
): Promise<FeedbackReply> {
  // Another user's conversation is not found, exactly like an unknown one.
  const header = await requireHeader(services.headers, userId, sessionId);
  const answerId = `${chatMessageId}_assistant`;
  const stored = await services.messages.get(userId, sessionId, answerId);
  if (stored === undefined) {
    // An answer that just ended is in working memory a moment before history stores it: ask again shortly.
    const pending = unpersistedMessages(await pendingMemory(services.workingMemory, header), header);
    if (pending.some((message) => message.messageId === answerId))
      throw new NotReadyError(
        `The answer to turn '${chatMessageId}' is being stored; rate it again in a moment.`,
      );
    const question = await services.messages.get(userId, sessionId, `${chatMessageId}_user`);
    if (question !== undefined)
      throw new ValidationError(
        `Turn '${chatMessageId}' has no answer to rate (it failed or was never answered).`,
      );
    throw new NotFoundError(`No turn '${chatMessageId}' in conversation '${sessionId}' for this user.`);
  }
  const feedback = rating === null ? undefined : { rating, at: now.toISOString() };
  if ((await services.messages.setFeedback(userId, sessionId, answerId, feedback)) === 'missing')
    throw new NotFoundError(`No turn '${chatMessageId}' in conversation '${sessionId}' for this user.`);
  return { chatMessageId, feedback: feedback ?? null };
}
