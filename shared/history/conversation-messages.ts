// The port of a conversation's messages kept long-term (container `conversation-messages`): one item per message
// by ordinal, so storing a turn writes a constant number of small items, and beside them the conversation's system
// prompt (not numbered). Adapter: adapters/cosmos-conversation-messages.ts.
import type { OrdinalGap } from '../conversation/branches.js';
import type { SystemPrompt } from '../conversation/messages.js';
import type { AnswerFeedback, ExchangeEntry, StoredMessage } from './contracts.js';

export interface MessagePageOptions {
  /** `asc`: ordinals above `after` (from the start when absent); `desc`: ordinals below `before` (from the end). */
  order: 'asc' | 'desc';
  after?: number | undefined;
  before?: number;
  limit: number;
  /** Ordinals in these ranges are left out: a branch's gaps, so the page holds only that branch's path. */
  skip?: readonly OrdinalGap[];
}

/** A turn that replaced another (an edit or a regenerate), by its user message: which group it belongs to. */
export interface AlternativeTurn {
  chatMessageId: string;
  /** Its user message's ordinal: alternatives are ordered by it, oldest first. */
  ordinal: number;
  /** The group: the first turn replaced. */
  alternativeOf: string;
}

export interface ConversationMessages {
  /**
   * Stores the messages whose item does not exist yet (by id); the others are left as they are. Returns how many were
   * new. `exchange`, the turn's index entry (all in one conversation), is written with them, as
   * SessionMemory.putExchange writes it: a turn's items cost one request.
   */
  put(messages: readonly StoredMessage[], exchange?: ExchangeEntry): Promise<number>;
  /** One page of the conversation's messages, in the order asked for. */
  page(userId: string, sessionId: string, options: MessagePageOptions): Promise<StoredMessage[]>;
  get(userId: string, sessionId: string, messageId: string): Promise<StoredMessage | undefined>;
  /** Sets (or, with undefined, removes) a stored message's feedback; 'missing' when there is no such message. */
  setFeedback(
    userId: string,
    sessionId: string,
    messageId: string,
    feedback: AnswerFeedback | undefined,
  ): Promise<'set' | 'missing'>;
  /**
   * The stored turns whose branch says they are alternatives in one of `groups` (their `alternativeOf`), one per
   * turn, oldest first: what a page's branch points offer. Bounded by the alternatives the groups have.
   */
  alternatives(userId: string, sessionId: string, groups: readonly string[]): Promise<AlternativeTurn[]>;
  /**
   * The newest stored message of a branch (its turn ends that branch as it was last continued); the main line
   * includes the messages committed before branches existed. Undefined when none is stored.
   */
  newestOfBranch(
    userId: string,
    sessionId: string,
    branchId: string,
  ): Promise<{ chatMessageId: string; ordinal: number } | undefined>;
  /**
   * The user's sessions with a message whose text matches every word of `q` (Cosmos DB full-text search in Azure;
   * the same matching in process where the server lacks it), at most `limit`.
   */
  sessionsMatching(userId: string, q: string, limit: number): Promise<string[]>;
  /** Stores the conversation's system prompt unless it has one: the first stored stays (a redelivery is a no-op). */
  putSystemPrompt(userId: string, sessionId: string, prompt: SystemPrompt): Promise<void>;
  getSystemPrompt(userId: string, sessionId: string): Promise<SystemPrompt | undefined>;
  /** Removes every item of the conversation (messages, exchange entries, digest, system prompt); returns how many. */
  deleteAll(userId: string, sessionId: string): Promise<number>;
}
