// The history worker's use-case: persists one finished turn (a `message-completed` event) to long-term history —
// one item per message, the exchange's index entry, the rolling digest (folding old turns into the summary when
// they outgrow the prompt), the model's title once the conversation has enough content, and, from the turn that
// opened the conversation, its system prompt (seed 000 keeps it as the first message) — and then records it on
// the header. Every step is idempotent, so a redelivered event changes nothing; every read and write is bounded
// by the turn (or by the folded turns), never by the length of the conversation (DESIGN §2).
import { sameGaps } from '../conversation/branch-path.js';
import type { ConversationMessage } from '../conversation/messages.js';
import type { MessageCompleted } from '../conversation/message-completed.js';
import type { OrdinalGap } from '../conversation/branches.js';
import type { SessionStore } from '../conversation/session-store.js';
import type { WorkingMemoryStore } from '../conversation/working-memory-store.js';
import type { LlmGateway } from '../llm/llm-gateway.js';
import type { Logger } from '../logger.js';
import {
  PROMPT_EXCHANGE_LINES,
  toStoredMessage,
  type ConversationHeader,
  type ExchangeEntry,
  type SessionDigest,
  type StoredMessage,
  type TokenTotals,
} from './contracts.js';
import type { ConversationHeaders } from './conversation-headers.js';
import type { ConversationMessages } from './conversation-messages.js';
import {
  checkpointOf,
  digestStandsFor,
  foldedDigest,
  foldIsDue,
  groupTurns,
  rebasedDigest,
  turnsToFold,
  turnTokens,
  unfoldedTokens,
  type StoredTurn,
} from './digest.js';
import { fallbackIndexLine, foldSummary, indexExchange, type ExchangeIndex } from './history-llm.js';
import type { SessionMemory } from './session-memory.js';
import { ensureError } from '../errors.js';

export interface HistoryWorkerServices {
  headers: ConversationHeaders;
  messages: ConversationMessages;
  sessionMemory: SessionMemory;
  llm: LlmGateway;
  /** Read only when the event's tool results were cut: the hot store may still hold them whole. */
  workingMemory: Pick<WorkingMemoryStore, 'load'>;
  /** The conversation's tombstone: a turn of a conversation being deleted, or deleted, is not persisted. */
  sessions: Pick<SessionStore, 'isDeleted'>;
  settings: { promptTokenBudget: number };
  now?: () => Date;
}

export type PersistOutcome =
  'persisted' | 'already-persisted' | 'conversation-deleted' | 'nothing-to-persist';

/** A conversation has enough content for a model title once an exchange holds this much text (or at its second). */
const TITLE_MIN_CHARS = 200;

/** Conditional digest writes tried before giving up (the event is then redelivered). */
const DIGEST_ATTEMPTS = 3;

/** Stored messages read per page while a fold looks for the turns to fold. */
export const FOLD_PAGE = 50;

type Log = Pick<Logger, 'log' | 'warn'>;
type TurnMessage = ConversationMessage & { ordinal: number };

export async function persistTurn(
  services: HistoryWorkerServices,
  event: MessageCompleted,
  log: Log,
): Promise<PersistOutcome> {
  const { userId, sessionId, chatMessageId } = event;
  const turnLabel = `turn ${chatMessageId} of session ${sessionId}`;
  if (event.messages.length === 0) {
    log.warn(`History: ${turnLabel} was announced without messages; nothing to persist.`);
    return 'nothing-to-persist';
  }
  const upTo = Math.max(...event.messages.map((message) => message.ordinal)) + 1;

  const [header, deleted] = await Promise.all([
    services.headers.get(userId, sessionId),
    services.sessions.isDeleted(userId, sessionId),
  ]);
  if (header === undefined || deleted) {
    log.log(`History: ${turnLabel} is not persisted: the conversation was deleted.`);
    return 'conversation-deleted';
  }
  // recordPersisted is the last step: a header past this turn means every step before it was done — unless this
  // is an older event replayed (from the dead-letter queue, say) after later turns: its last item tells.
  if (header.persistedCount >= upTo) {
    const last = event.messages.reduce((a, b) => (b.ordinal > a.ordinal ? b : a));
    if (await services.messages.get(userId, sessionId, last.messageId)) return 'already-persisted';
    log.warn(`History: ${turnLabel} arrived after later turns were persisted; storing it now.`);
  }

  const messages = event.complete ? event.messages : await wholeMessages(services, event, log);
  const user = messages.find((message) => message.role === 'user');
  const assistant = messages.find((message) => message.role === 'assistant');
  const completed = event.outcome === 'completed' && user !== undefined && assistant !== undefined;
  const at = (services.now?.() ?? new Date()).toISOString();
  const turn: ThisTurn = {
    firstOrdinal: Math.min(...messages.map((message) => message.ordinal)),
    upTo,
    tokens: turnTokens(messages),
    gaps: messages.find((message) => message.branch !== undefined)?.branch?.gaps ?? [],
  };

  // Independent of each other: a fold never takes this turn (it reads only the turns stored before it), so it
  // needs neither its items nor its index line.
  await Promise.all([
    services.messages.put(messages.map((message) => toStoredMessage(event.userId, event.sessionId, message))),
    event.systemPrompt === undefined
      ? Promise.resolve()
      : services.messages.putSystemPrompt(userId, sessionId, event.systemPrompt),
    completed ? indexTurn(services, event, header, { user, assistant }, log) : Promise.resolve(),
    updateDigest(services, event, header, turn, at, log),
  ]);

  const recorded = await services.headers.recordPersisted(userId, sessionId, {
    upTo,
    at,
    tokens: tokenTotals(assistant),
    textTokens: turn.tokens,
  });
  // Read after every write: a delete that marked the session before this read is seen here; one that marks it
  // later purges these writes itself.
  if (recorded === 'missing' || (await services.sessions.isDeleted(userId, sessionId))) {
    // Deleted while this ran: the delete may have passed before these writes landed.
    const [removed] = await Promise.all([
      services.messages.deleteAll(userId, sessionId),
      services.headers.delete(userId, sessionId),
    ]);
    log.log(`History: ${turnLabel}: the conversation was deleted meanwhile; removed ${removed} items again.`);
    return 'conversation-deleted';
  }
  return 'persisted';
}

/**
 * The turn's messages with their tool results and sources whole when the hot store still holds them (it expires
 * after 24 h); else the event's, cut, which is logged. (Sources come only from tool calls, so an answer whose
 * sources the event cut or left out has tool calls too: when those cannot be restored, the log says so.)
 */
async function wholeMessages(
  services: HistoryWorkerServices,
  event: MessageCompleted,
  log: Log,
): Promise<TurnMessage[]> {
  const memory = await services.workingMemory.load(event.userId, event.sessionId);
  // A turn the user has since branched away from is no longer in the window, but still beside it (offPath).
  const whole = new Map(
    [...memory.messages, ...(memory.offPath ?? [])].map((message) => [message.messageId, message]),
  );
  let cut = 0;
  const messages = event.messages.map((message) => {
    const found = whole.get(message.messageId);
    if (message.toolCalls !== undefined && found?.toolCalls === undefined) cut += 1;
    return {
      ...message,
      ...(message.toolCalls !== undefined && found?.toolCalls !== undefined
        ? { toolCalls: found.toolCalls }
        : {}),
      ...(found?.sources !== undefined ? { sources: found.sources } : {}),
    };
  });
  if (cut > 0)
    log.warn(
      `History: turn ${event.chatMessageId} of session ${event.sessionId} is stored with its tool results cut ` +
        '(the event was too large and working memory no longer holds them).',
    );
  return messages;
}

function tokenTotals(assistant: ConversationMessage | undefined): TokenTotals {
  const usage = assistant?.usage;
  return usage
    ? { prompt: usage.promptTokens, completion: usage.completionTokens, total: usage.totalTokens }
    : { prompt: 0, completion: 0, total: 0 };
}

/**
 * The exchange's index entry, and the model's title when one is due: one model call. A failed or invalid answer
 * does not stop persistence: the line falls back to the question, and the title stays (to be tried next turn).
 */
async function indexTurn(
  services: HistoryWorkerServices,
  event: MessageCompleted,
  header: ConversationHeader,
  exchange: { user: TurnMessage; assistant: TurnMessage },
  log: Log,
): Promise<void> {
  const { user, assistant } = exchange;
  const titleDue =
    header.titleSource === 'first-message' &&
    (user.ordinal >= 2 || user.content.length + assistant.content.length >= TITLE_MIN_CHARS);
  let index: ExchangeIndex;
  try {
    index = await indexExchange(
      services.llm,
      { question: user.content, answer: assistant.content },
      titleDue ? { firstQuestion: header.title } : undefined,
    );
  } catch (error) {
    log.warn(
      `History: no index line from the model for turn ${event.chatMessageId} of session ${event.sessionId}; ` +
        `the question stands in. ${ensureError(error).message}`,
    );
    index = { line: fallbackIndexLine(user.content), tags: [] };
  }
  const entry: ExchangeEntry = {
    exchangeId: event.chatMessageId,
    ordinal: user.ordinal,
    line: index.line,
    tags: index.tags,
    at: assistant.timestamp,
  };
  const [, titled] = await Promise.all([
    services.sessionMemory.putExchange(event.userId, event.sessionId, entry),
    index.title === undefined
      ? undefined
      : services.headers.setTitle(event.userId, event.sessionId, index.title, 'model'),
  ]);
  if (titled === 'kept')
    log.log(`History: session ${event.sessionId} keeps the title its user set; the model's is not used.`);
}

/** What the digest's bookkeeping needs of the turn being persisted. */
interface ThisTurn {
  /** The ordinal of its first message: a fold reads and takes only what lies below. */
  firstOrdinal: number;
  upTo: number;
  /** Its size in the prompt (turnTokens), which the header counts once the turn is recorded. */
  tokens: number;
  /** Its path: the gaps of its branch (none on the main line, and for turns committed before branches existed). */
  gaps: readonly OrdinalGap[];
}

/**
 * Keeps the digest standing for the path of the newest turn, and folds the oldest unfolded turns of that path into
 * the summary when they pass half the prompt budget. The digest is written only then, or when the turn is on
 * another path than the digest's (an edit, a regenerate, a switch between branches): a turn that continues the
 * path without folding costs one conditional read of it (mostly unchanged) and no write. The write is conditional,
 * redone from a fresh read on a conflict. The decision rests on the header read at the start (only this worker
 * changes its counts, one turn at a time) and the digest, so a redelivered turn whose fold is done finds the
 * digest's count advanced (and its path already this turn's) and does nothing more.
 */
async function updateDigest(
  services: HistoryWorkerServices,
  event: MessageCompleted,
  header: ConversationHeader,
  turn: ThisTurn,
  at: string,
  log: Log,
): Promise<void> {
  const { userId, sessionId } = event;
  // An older turn replayed after later ones (from the dead-letter queue): the digest has moved on with them, maybe
  // onto another path, and this turn must not move it back.
  if (header.persistedCount >= turn.upTo) return;
  for (let attempt = 1; ; attempt++) {
    const stored = await services.sessionMemory.getDigest(userId, sessionId);
    const digest = stored?.digest;
    const next = sameGaps(digest?.gaps ?? [], turn.gaps)
      ? await foldAlongPath(services, event, header, turn, digest, at, log)
      : await rebaseOnPath(services, event, header, turn, digest, at, log);
    if (next === undefined) return;
    // The checkpoint before the digest: a digest whose checkpoint failed is not written, so the redelivered turn
    // does its fold again and writes both (a checkpoint already there stays, summarising the same messages).
    const checkpoint = checkpointOf(next, at);
    if (checkpoint) await services.sessionMemory.putCheckpoint(userId, sessionId, checkpoint);
    const written = await services.sessionMemory.putDigest(userId, sessionId, next, stored?.version);
    if (written === 'written') return;
    if (attempt >= DIGEST_ATTEMPTS)
      throw new Error(
        `The digest of session ${sessionId} changed under ${DIGEST_ATTEMPTS} writes in a row; ` +
          'the event will be delivered again.',
      );
  }
}

/**
 * The turn continues the digest's path: the unfolded part of the path is the header's count less the digest's,
 * and when it passes half the budget the oldest unfolded turns of the path are folded. Undefined: nothing to write.
 */
async function foldAlongPath(
  services: HistoryWorkerServices,
  event: MessageCompleted,
  header: ConversationHeader,
  turn: ThisTurn,
  digest: SessionDigest | undefined,
  at: string,
  log: Log,
): Promise<SessionDigest | undefined> {
  const unfolded = unfoldedTokens(header, turn, digest);
  if (!foldIsDue(unfolded, services.settings.promptTokenBudget)) return undefined;
  const folding = await oldestUnfoldedTurns(services, event, digest?.summarizedThrough ?? 0, {
    tokens: unfolded,
    before: turn.firstOrdinal,
    gaps: turn.gaps,
  });
  return fold(services, event, digest, folding, at, log);
}

/**
 * The turn is on another path than the digest's. The digest is rebased on the turn's path, from the newest of: the
 * digest itself when it stands for that path (what it folded is on it), the newest checkpoint on the path, or
 * nothing folded. Then the path's turns since that point are read, newest first, to count what is unfolded (the
 * header's count also holds other branches' turns, so it cannot tell) and fold when due. A checkpoint is written at
 * every fold of every path, so the path's newest one is at most about half a budget behind the path's newest turn
 * (folds keep what is unfolded under that): the reading is bounded by the budget, never by the conversation. When
 * a path has no checkpoint close enough (folded before checkpoints existed, or many folds failed in a row), the
 * reading stops after a budget's worth of turns, and the summary starts again above them (logged).
 */
async function rebaseOnPath(
  services: HistoryWorkerServices,
  event: MessageCompleted,
  header: ConversationHeader,
  turn: ThisTurn,
  digest: SessionDigest | undefined,
  at: string,
  log: Log,
): Promise<SessionDigest | undefined> {
  const { userId, sessionId } = event;
  const path = { skip: turn.gaps };
  let base: { summary: string; summarizedThrough: number; recentExchanges?: ExchangeEntry[] } = {
    summary: '',
    summarizedThrough: 0,
    recentExchanges: [],
  };
  if (digest !== undefined && digestStandsFor(digest, turn.gaps)) base = digest;
  else if (digest !== undefined) {
    // The digest is left for another path: its checkpoint (there is one already unless it was folded before
    // checkpoints existed) keeps its summary for when a turn comes back to that path.
    const left = checkpointOf(digest, at);
    if (left) await services.sessionMemory.putCheckpoint(userId, sessionId, left);
  }
  const checkpoint = await services.sessionMemory.latestCheckpoint(userId, sessionId, {
    before: turn.firstOrdinal,
    ...path,
  });
  if (checkpoint !== undefined && checkpoint.summarizedThrough > base.summarizedThrough)
    base = { summary: checkpoint.summary, summarizedThrough: checkpoint.summarizedThrough };

  const read = await pathTurnsSince(services, event, turn, base.summarizedThrough);
  if (read.cutAt !== undefined) {
    log.warn(
      `History: the path of turn ${event.chatMessageId} of session ${sessionId} has more than a prompt budget ` +
        `of turns after its last summary (ordinal ${base.summarizedThrough}); its summary starts again at ` +
        `ordinal ${read.cutAt}, and the turns before are reached by the past-answer tools only.`,
    );
    base = { summary: '', summarizedThrough: read.cutAt };
  }
  const recentExchanges =
    base.recentExchanges ??
    (base.summarizedThrough === 0
      ? []
      : await services.sessionMemory.pathExchanges(userId, sessionId, {
          before: base.summarizedThrough,
          limit: PROMPT_EXCHANGE_LINES,
          ...path,
        }));
  const unfolded = read.turns.reduce((sum, one) => sum + one.tokens, 0) + turn.tokens;
  const rebased = rebasedDigest({
    base: { ...base, recentExchanges },
    gaps: turn.gaps,
    headerTokens: header.textTokens + (header.persistedCount < turn.upTo ? turn.tokens : 0),
    unfolded,
    at,
  });
  if (!foldIsDue(unfolded, services.settings.promptTokenBudget)) return rebased;
  const { fold: folding } = turnsToFold(read.turns, unfolded, services.settings.promptTokenBudget);
  // A fold the model cannot make now leaves the rebased digest (the path is still right): the next turn folds.
  return (await fold(services, event, rebased, folding, at, log)) ?? rebased;
}

/**
 * The turns of the current turn's path from ordinal `from` up to the turn (excluded), oldest first: read a page at
 * a time from the turn backwards, leaving out the path's gaps. The reading stops once a prompt budget of turns is
 * read: then the oldest turn read (which a page may have cut) is left out too, and `cutAt` is the ordinal after
 * it, so the last message below `cutAt` is on the path (what a checkpoint at `cutAt` needs).
 */
async function pathTurnsSince(
  services: HistoryWorkerServices,
  event: MessageCompleted,
  turn: ThisTurn,
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
async function fold(
  services: HistoryWorkerServices,
  event: MessageCompleted,
  digest: SessionDigest | undefined,
  folding: readonly StoredTurn<StoredMessage>[],
  at: string,
  log: Log,
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
async function oldestUnfoldedTurns(
  services: HistoryWorkerServices,
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
