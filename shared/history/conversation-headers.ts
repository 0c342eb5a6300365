// The port of conversation headers (container `conversations`): one small document per conversation with its
// title, dates, counts and preview, listed by user; contracts.ts says who writes which fields. Adapter:
// adapters/cosmos-conversation-headers.ts.
import type { ConversationHeader, ConversationPath, TitleSource, TokenTotals } from './contracts.js';
import { firstMessageTitle } from './titles.js';

/** What a turn's commit knows of its conversation once working memory holds the turn. */
export interface HeaderTouch {
  userId: string;
  sessionId: string;
  /** When the conversation began (its first message). */
  createdAt: string;
  /** The newest message's timestamp. */
  lastActivity: string;
  /** Messages committed in all (working memory's messageCount). */
  messageCount: number;
  /** The start of the newest message's text. */
  preview: string;
  /** The text of the conversation's first user message: the title of a header created now. */
  firstUserText: string;
  /** The turn holds the conversation's first message: its header is created now, not patched (absent: patch first). */
  opensConversation?: boolean;
  /** The active path after the commit: the committed turn is its leaf. */
  path?: ConversationPath;
  /** The committed turn forked (an edit or a regenerate): the header says so from now on. */
  branched?: boolean;
  /** The project the conversation was started in: a header created now is filed there. */
  projectId?: string;
}

export interface PersistedTurn {
  /** The ordinal after the turn's last message: persistedCount becomes this. */
  upTo: number;
  at: string;
  /** The turn's tokens, added to the header's once. */
  tokens: TokenTotals;
  /** The prompt-size estimate of the turn's text (digest.ts `turnTokens`), added to the header's once. */
  textTokens: number;
  /**
   * The header as the caller read it (`read`): the turn is recorded on that header only, not on one made again under
   * its id after a delete removed it. Absent: on whichever header stands.
   */
  incarnation?: string;
}

/** A header as read, with what tells it from a header made again under the same id once a delete removed it. */
export interface ReadHeader {
  header: ConversationHeader;
  incarnation: string;
}

export interface HeaderListOptions {
  limit: number;
  /** Opaque, from an earlier page; an invalid one → BadRequestError. */
  continuationToken?: string;
  /** Only conversations whose title matches (full-text: every word of q), or whose session is in `sessionIds`. */
  match?: { q: string; sessionIds: readonly string[] };
  /** Only the conversations filed in this project. */
  projectId?: string;
}

export interface ConversationHeaders {
  /** The caller's header; undefined when the caller has no conversation with that id, or it is being deleted. */
  get(userId: string, sessionId: string): Promise<ConversationHeader | undefined>;
  /** As get, with the header's incarnation, which `recordPersisted` can be held to. */
  read(userId: string, sessionId: string): Promise<ReadHeader | undefined>;
  /**
   * Keeps the header live after a commit: creates it (title from the first user message, cut to 80 characters at
   * a word) when missing, else moves lastActivity, messageCount and preview forward; a touch older than the
   * stored count changes nothing, so a retried commit is harmless.
   */
  touch(touch: HeaderTouch): Promise<void>;
  /**
   * Records a turn as stored by the history worker, once: persistedCount, persistedAt, tokens and textTokens change
   * only if persistedCount < upTo, the header is not marked by a delete, and it is the `incarnation` given. 'missing'
   * when the conversation has no header (it was deleted); 'already-recorded' when a condition failed: the header
   * counts the turn already, or is marked or made again by a delete (the caller that must tell these apart reads the
   * conversation's tombstone).
   */
  recordPersisted(
    userId: string,
    sessionId: string,
    turn: PersistedTurn,
  ): Promise<'recorded' | 'already-recorded' | 'missing'>;
  /**
   * Sets the title. A 'model' title never replaces a 'user' one ('kept'); 'missing' when there is no header.
   */
  setTitle(
    userId: string,
    sessionId: string,
    title: string,
    source: TitleSource,
  ): Promise<'set' | 'kept' | 'missing'>;
  /**
   * Sets the active branch path and the preview that follows it (a switch), unless a commit moved the header past
   * `messageCount` (the count of working memory the switch moved): that commit's path is newer ('moved'). 'missing'
   * when there is no header.
   */
  setPath(
    userId: string,
    sessionId: string,
    change: { path: ConversationPath; preview: string; messageCount: number },
  ): Promise<'set' | 'moved' | 'missing'>;
  /** The caller's conversations, newest activity first, one page at a time. */
  list(
    userId: string,
    options: HeaderListOptions,
  ): Promise<{ headers: ConversationHeader[]; continuationToken?: string }>;
  /** Totals over the caller's conversations. */
  totals(userId: string): Promise<{ conversations: number; messages: number; tokens: TokenTotals }>;
  /** Files the conversation in a project, or in none (null); false when it has no header. */
  setProject(userId: string, sessionId: string, projectId: string | null): Promise<boolean>;
  /**
   * Marks the header as being deleted, before the delete purges anything: from then on it is missing to `get` and
   * `read`, and `recordPersisted` leaves it as it is. No patch of the header removes the mark; the header's removal
   * ends it. False when there is no header.
   */
  markDeleting(userId: string, sessionId: string): Promise<boolean>;
  /** Removes the header; false when there was none. */
  delete(userId: string, sessionId: string): Promise<boolean>;
}

/** The header a conversation's first commit creates: titled from its first message, nothing persisted yet. */
export function newConversationHeader(touch: HeaderTouch): ConversationHeader {
  return {
    id: touch.sessionId,
    kind: 'conversation',
    ...(touch.projectId !== undefined ? { projectId: touch.projectId } : {}),
    userId: touch.userId,
    sessionId: touch.sessionId,
    title: firstMessageTitle(touch.firstUserText),
    titleSource: 'first-message',
    createdAt: touch.createdAt,
    lastActivity: touch.lastActivity,
    messageCount: touch.messageCount,
    preview: touch.preview,
    persistedCount: 0,
    persistedAt: null,
    tokens: { prompt: 0, completion: 0, total: 0 },
    textTokens: 0,
    ...(touch.path ? { path: touch.path } : {}),
    ...(touch.branched ? { branched: true as const } : {}),
  };
}
