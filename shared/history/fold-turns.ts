// Reading the stored turns of a path a page at a time (from where the summary ends, or back from the turn) and
// folding the oldest into the rolling summary with one model call: what the digest's updates read and ask for.
import type { MessageCompleted } from '../conversation/message-completed.js';
import type { OrdinalGap } from '../conversation/branches.js';
import type { LlmGateway } from '../llm/llm-gateway.js';
import type { Logger } from '../logger.js';
import { ensureError } from '../errors.js';
import type { ExchangeEntry, SessionDigest, StoredMessage } from './contracts.js';
import type { ConversationMessages } from './conversation-messages.js';
import { foldedDigest, groupTurns, turnsToFold, turnTokens, type StoredTurn } from './digest.js';
import { foldSummary } from './history-llm.js';
import type { SessionMemory } from './session-memory.js';

export interface DigestServices {
  messages: ConversationMessages;
  sessionMemory: SessionMemory;
  llm: LlmGateway;
  settings: { promptTokenBudget: number };
}

/** Stored messages read per page while a fold looks for the turns to fold. */
export const FOLD_PAGE = 50;

/**
 * The turns of the current turn's path from ordinal `from` up to the turn (excluded), oldest first: read a page at
 * a time from the turn backwards, leaving out the path's gaps. The reading stops once a prompt budget of turns is
 * read: then the oldest turn read (which a page may have cut) is left out too, and `cutAt` is the ordinal after
 * it, so the last message below `cutAt` is on the path (what a checkpoint at `cutAt` needs).
 */
export async function pathTurnsSince(
  services: DigestServices,
  event: MessageCompleted,
  turn: { firstOrdinal: number; gaps: readonly OrdinalGap[] },
  from: number,
): Promise<{ turns: StoredTurn<StoredMessage>[]; cutAt?: number }> {
  const newestFirst: StoredMessage[] = [];
  let before = turn.firstOrdinal;
  for (;;) {
    const page = await services.messages.page(event.userId, event.sessionId, {
      order: 'desc',
      before,
      limit: FOLD_PAGE,
      skip: turn.gaps,
    });
    const since = page.filter((message) => message.ordinal >= from);
    newestFirst.push(...since);
    const last = page.at(-1);
    if (last === undefined || page.length < FOLD_PAGE || since.length < page.length)
      return { turns: groupTurns([...newestFirst].reverse()) };
    if (turnTokens(newestFirst) > services.settings.promptTokenBudget) {
      const [cut, ...turns] = groupTurns([...newestFirst].reverse());
      return { turns, cutAt: (cut?.toOrdinal ?? from - 1) + 1 };
    }
    before = last.ordinal;
  }
}

/**
 * The digest with `folding` (the oldest unfolded turns of its path) in its summary: their index entries (point
 * reads), one model call. Undefined when there is nothing to fold or the model gives no usable summary: the digest
 * stays as it is and the next turn tries again (the prompt fits the history to its budget meanwhile).
 */
export async function fold(
  services: DigestServices,
  event: MessageCompleted,
  digest: SessionDigest | undefined,
  folding: readonly StoredTurn<StoredMessage>[],
  at: string,
  log: Pick<Logger, 'warn'>,
): Promise<SessionDigest | undefined> {
  const { userId, sessionId } = event;
  if (folding.length === 0) return undefined;
  const entries = await Promise.all(
    folding.map((turn) => services.sessionMemory.getExchange(userId, sessionId, turn.chatMessageId)),
  );
  const exchanges = folding.map((turn) => {
    const question = turn.messages.find((message) => message.role === 'user');
    return {
      question: question?.content ?? '',
      answer: turn.messages.find((message) => message.role === 'assistant')?.content ?? '',
      failed: question?.failure !== undefined,
    };
  });
  try {
    const summary = await foldSummary(services.llm, digest?.summary ?? '', exchanges);
    const lines = entries.filter((entry): entry is ExchangeEntry => entry !== undefined);
    return foldedDigest(digest, { turns: folding, summary, lines }, at);
  } catch (error) {
    log.warn(
      `History: session ${sessionId} keeps ${folding.length} turns out of its summary for now: no summary ` +
        `from the model. ${ensureError(error).message}`,
    );
    return undefined;
  }
}

/**
 * The turns to fold: the stored messages of the turn's path from where the summary ends, a page at a time in
 * ordinal order, grouped into turns, the oldest taken until the rest of the unfolded history is at most a quarter
 * of the budget. The reading stops there, at the current turn (`before`: never folded), or where the stored
 * messages end; so a fold reads about a quarter of the budget's worth of messages plus at most one partial page,
 * never the conversation. Other branches' messages (the path's gaps) are not read.
 */
export async function oldestUnfoldedTurns(
  services: DigestServices,
  event: MessageCompleted,
  summarizedThrough: number,
  { tokens: unfolded, before, gaps }: { tokens: number; before: number; gaps: readonly OrdinalGap[] },
): Promise<StoredTurn<StoredMessage>[]> {
  const read: StoredMessage[] = [];
  let after = summarizedThrough === 0 ? undefined : summarizedThrough - 1;
  for (;;) {
    const page = await services.messages.page(event.userId, event.sessionId, {
      order: 'asc',
      after,
      limit: FOLD_PAGE,
      ...(gaps.length > 0 ? { skip: gaps } : {}),
    });
    const below = page.filter((message) => message.ordinal < before);
    read.push(...below);
    const last = page.at(-1);
    const ended = last === undefined || page.length < FOLD_PAGE || below.length < page.length;
    const turns = groupTurns(read);
    // The last turn read may go on in the next page: whole turns only until the reading has ended.
    const whole = ended ? turns : turns.slice(0, -1);
    const { fold, enough } = turnsToFold(whole, unfolded, services.settings.promptTokenBudget);
    if (enough || ended) return fold;
    after = last.ordinal;
  }
}
