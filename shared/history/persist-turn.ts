// The history worker's use-case: persists one finished turn (a `message-completed` event) to long-term history, its
// steps each in its own module, and then records it on the header. Every step is idempotent, so a redelivered event
// changes nothing; every read and write is bounded by the turn (or the folded turns), never by the conversation.
import type { ConversationMessage } from '../conversation/messages.js';
import type { MessageCompleted } from '../conversation/message-completed.js';
import type { SessionStore } from '../conversation/session-store.js';
import type { WorkingMemoryStore } from '../conversation/working-memory-store.js';
import type { Logger } from '../logger.js';
import { toStoredMessage, type TokenTotals } from './contracts.js';
import { turnTokens } from './digest.js';
import type { DigestServices } from './fold-turns.js';
import { indexTurn, type IndexServices } from './index-turn.js';
import { updateDigest, type ThisTurn } from './update-digest.js';
import { wholeMessages } from './whole-messages.js';

export interface HistoryWorkerServices extends IndexServices, DigestServices {
  /**
   * Read only when the event's tool results were cut (the hot store may still hold them whole); told of each digest
   * revision before it is written.
   */
  workingMemory: Pick<WorkingMemoryStore, 'load' | 'announceDigest'>;
  /**
   * The conversation's tombstone, read only when the header's record did not land: a turn of a conversation being
   * deleted, or deleted, is not kept.
   */
  sessions: Pick<SessionStore, 'isDeleted'>;
  now?: () => Date;
}

type Log = Pick<Logger, 'log' | 'warn'>;

export type PersistOutcome =
  'persisted' | 'already-persisted' | 'conversation-deleted' | 'nothing-to-persist';

/**
 * One item per message, the exchange's index entry and the model's title, the rolling digest, and from the turn
 * that opened the conversation its system prompt (kept as its first message, apart from the numbered ones); then
 * the header's counts, once.
 */
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

  // No header: the conversation was deleted, or is being deleted (the delete marks it before it purges anything).
  const read = await services.headers.read(userId, sessionId);
  if (read === undefined) {
    // A delivery that wrote items after the delete's purge and died before its record left them to this one, the
    // last that will come: taken back once the tombstone says so (a path only a deleted conversation takes).
    if (await services.sessions.isDeleted(userId, sessionId))
      await services.messages.deleteAll(userId, sessionId);
    log.log(`History: ${turnLabel} is not persisted: the conversation was deleted.`);
    return 'conversation-deleted';
  }
  const { header } = read;
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
  // needs neither its items nor its index line. The items wait for the line, to be written with it in one request.
  const stored = messages.map((message) => toStoredMessage(event.userId, event.sessionId, message));
  await Promise.all([
    (completed
      ? indexTurn(services, event, header, { user, assistant }, log)
      : Promise.resolve(undefined)
    ).then((exchange) => services.messages.put(stored, exchange)),
    event.systemPrompt === undefined
      ? Promise.resolve()
      : services.messages.putSystemPrompt(userId, sessionId, event.systemPrompt),
    updateDigest({ services, event, header, turn, at, log }),
  ]);

  // The last write, on the header read above and only while no delete marked it: recorded, it landed before the
  // delete's mark, and every write above before it, so before the delete's purge, which removes them. Otherwise the
  // conversation may be being deleted: the tombstone tells (read only then), and this job takes its writes back.
  const recorded = await services.headers.recordPersisted(userId, sessionId, {
    upTo,
    at,
    tokens: tokenTotals(assistant),
    textTokens: turn.tokens,
    incarnation: read.incarnation,
  });
  const deleted =
    recorded === 'missing' ||
    (recorded === 'already-recorded' && (await services.sessions.isDeleted(userId, sessionId)));
  if (deleted) {
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

function tokenTotals(assistant: ConversationMessage | undefined): TokenTotals {
  const usage = assistant?.usage;
  return usage
    ? { prompt: usage.promptTokens, completion: usage.completionTokens, total: usage.totalTokens }
    : { prompt: 0, completion: 0, total: 0 };
}
