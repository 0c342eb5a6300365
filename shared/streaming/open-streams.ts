// The SSE streams open in this instance, by user: one user may hold at most STREAMS_PER_USER at once, and one more
// is refused with 429 until one ends (a stream ends with its turn, when its client goes, or when idle).
import { QuotaExceededError } from '../errors.js';

/** A refused stream asks again after this long: streams end as their turns do, which the client cannot see coming. */
export const STREAM_RETRY_SECONDS = 5;

export class OpenStreams {
  readonly #open = new Map<string, number>();

  /** `perUser`: 0 = no cap. */
  constructor(readonly perUser: number) {}

  /** Takes a place for one more stream of the user, or throws QuotaExceededError; the function given back frees it. */
  take(userId: string): () => void {
    const open = this.#open.get(userId) ?? 0;
    if (this.perUser > 0 && open >= this.perUser)
      throw new QuotaExceededError(
        `You have ${open} event streams open, the most allowed at once (${this.perUser}): close one, or wait for ` +
          'an answer to end, then open this one again. (STREAMS_PER_USER)',
        'streams-per-user',
        this.perUser,
        open,
        STREAM_RETRY_SECONDS,
      );
    this.#open.set(userId, open + 1);
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      const left = (this.#open.get(userId) ?? 1) - 1;
      if (left > 0) this.#open.set(userId, left);
      else this.#open.delete(userId);
    };
  }

  /** The user's streams open now. */
  count(userId: string): number {
    return this.#open.get(userId) ?? 0;
  }
}
