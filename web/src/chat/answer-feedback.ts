// The owner's thumbs up or down on an answer: sent to history, where the answer's stored message keeps it. An answer
// that has just ended is stored a moment later, so a 409 with Retry-After is asked again, a few times.
import { ApiError } from '../api/client';
import type { ApiClient } from '../api/client';

export type Rating = 'up' | 'down';

const ATTEMPTS = 5;

/** Sets (or with null takes back) the rating of `chatMessageId`'s answer; the rating history now keeps. */
export async function rateAnswer(
  api: ApiClient,
  sessionId: string,
  chatMessageId: string,
  rating: Rating | null,
): Promise<Rating | undefined> {
  const path = `/api/history/conversations/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(chatMessageId)}/feedback`;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const reply = await api.json<{ feedback: { rating: Rating } | null }>('PUT', path, { rating });
      return reply.feedback?.rating;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 409 || attempt >= ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, (error.retryAfter ?? 1) * 1000));
    }
  }
}
