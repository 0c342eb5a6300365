// Hand-written in-memory implementations of the history area's ports (conversation headers, long-term messages,
// session memory), with the semantics their Cosmos DB adapters have, for tests of use-cases in process.
import { MAIN_BRANCH, type OrdinalGap } from '../../shared/conversation/branches.js';
import type { SystemPrompt } from '../../shared/conversation/messages.js';
import { inGaps } from '../../shared/conversation/branch-path.js';
import {
  type ConversationHeader,
  type ConversationPath,
  type DigestCheckpoint,
  type ExchangeEntry,
  type SessionDigest,
  type AnswerFeedback,
  type StoredMessage,
  type TitleSource,
} from '../../shared/history/contracts.js';
import {
  newConversationHeader,
  type ConversationHeaders,
  type HeaderListOptions,
  type HeaderTouch,
  type PersistedTurn,
} from '../../shared/history/conversation-headers.js';
import type { ConversationMessages, MessagePageOptions } from '../../shared/history/conversation-messages.js';
import type { SessionMemory, StoredDigest } from '../../shared/history/session-memory.js';
import { ValidationError } from '../../shared/errors.js';
import { exchangeIsAbout, fullTextMatches } from '../../shared/search/full-text.js';

const key = (userId: string, sessionId: string) => `${userId}\u0000${sessionId}`;
/** Every word of q in text, as the Cosmos DB adapters match (full-text search, or its in-process stand-in). */
const matchesAll = fullTextMatches;

export class MemoryConversationHeaders implements ConversationHeaders {
  readonly headers = new Map<string, ConversationHeader>();
  /** Headers a delete marked (the mark goes with the header's removal, as in Cosmos DB). */
  readonly #deleting = new WeakSet<ConversationHeader>();
  /** Each header object's incarnation: a header made again under the same key is a new object, so another. */
  readonly #incarnations = new WeakMap<ConversationHeader, number>();
  #made = 0;

  #incarnation(header: ConversationHeader): number {
    let made = this.#incarnations.get(header);
    if (made === undefined) this.#incarnations.set(header, (made = ++this.#made));
    return made;
  }

  get(userId: string, sessionId: string) {
    return this.read(userId, sessionId).then((read) => read?.header);
  }

  read(userId: string, sessionId: string) {
    const header = this.headers.get(key(userId, sessionId));
    if (header === undefined || this.#deleting.has(header)) return Promise.resolve(undefined);
    return Promise.resolve({
      header: structuredClone(header),
      incarnation: String(this.#incarnation(header)),
    });
  }

  markDeleting(userId: string, sessionId: string) {
    const header = this.headers.get(key(userId, sessionId));
    if (header !== undefined) this.#deleting.add(header);
    return Promise.resolve(header !== undefined);
  }

  touch(touch: HeaderTouch) {
    const k = key(touch.userId, touch.sessionId);
    const header = this.headers.get(k);
    if (header === undefined) {
      this.headers.set(k, newConversationHeader(touch));
    } else if (touch.messageCount >= header.messageCount) {
      Object.assign(header, {
        lastActivity: touch.lastActivity,
        messageCount: touch.messageCount,
        preview: touch.preview,
        ...(touch.path ? { path: structuredClone(touch.path) } : {}),
        ...(touch.branched ? { branched: true } : {}),
      });
    }
    return Promise.resolve();
  }

  setPath(
    userId: string,
    sessionId: string,
    change: { path: ConversationPath; preview: string; messageCount: number },
  ) {
    const header = this.headers.get(key(userId, sessionId));
    if (header === undefined) return Promise.resolve('missing' as const);
    if (header.messageCount > change.messageCount) return Promise.resolve('moved' as const);
    header.path = structuredClone(change.path);
    header.preview = change.preview;
    return Promise.resolve('set' as const);
  }

  recordPersisted(userId: string, sessionId: string, turn: PersistedTurn) {
    const header = this.headers.get(key(userId, sessionId));
    if (header === undefined) return Promise.resolve('missing' as const);
    const another = turn.incarnation !== undefined && turn.incarnation !== String(this.#incarnation(header));
    if (header.persistedCount >= turn.upTo || this.#deleting.has(header) || another)
      return Promise.resolve('already-recorded' as const);
    header.persistedCount = turn.upTo;
    header.persistedAt = turn.at;
    header.tokens = {
      prompt: header.tokens.prompt + turn.tokens.prompt,
      completion: header.tokens.completion + turn.tokens.completion,
      total: header.tokens.total + turn.tokens.total,
    };
    header.textTokens += turn.textTokens;
    return Promise.resolve('recorded' as const);
  }

  setTitle(userId: string, sessionId: string, title: string, source: TitleSource) {
    const header = this.headers.get(key(userId, sessionId));
    if (header === undefined) return Promise.resolve('missing' as const);
    if (source === 'model' && header.titleSource === 'user') return Promise.resolve('kept' as const);
    header.title = title;
    header.titleSource = source;
    return Promise.resolve('set' as const);
  }

  setProject(userId: string, sessionId: string, projectId: string | null) {
    const header = this.headers.get(key(userId, sessionId));
    if (header === undefined) return Promise.resolve(false);
    const { projectId: _old, ...rest } = header;
    // The same header patched: its incarnation and mark stay.
    const filed = projectId === null ? rest : { ...rest, projectId };
    this.#incarnations.set(filed, this.#incarnation(header));
    if (this.#deleting.has(header)) this.#deleting.add(filed);
    this.headers.set(key(userId, sessionId), filed);
    return Promise.resolve(true);
  }

  list(userId: string, options: HeaderListOptions) {
    let offset = 0;
    if (options.continuationToken !== undefined) {
      offset = Number(options.continuationToken);
      if (!Number.isInteger(offset) || offset < 0) throw new ValidationError('Invalid continuationToken.');
    }
    const all = [...this.headers.values()]
      .filter((header) => header.userId === userId)
      .filter(
        (header) =>
          options.match === undefined ||
          matchesAll(header.title, options.match.q) ||
          options.match.sessionIds.includes(header.sessionId),
      )
      .filter((header) => options.projectId === undefined || header.projectId === options.projectId)
      .sort((a, b) => b.lastActivity.localeCompare(a.lastActivity) || b.sessionId.localeCompare(a.sessionId));
    const headers = all.slice(offset, offset + options.limit).map((header) => structuredClone(header));
    const next = offset + options.limit;
    return Promise.resolve(next < all.length ? { headers, continuationToken: String(next) } : { headers });
  }

  totals(userId: string) {
    const mine = [...this.headers.values()].filter((header) => header.userId === userId);
    return Promise.resolve({
      conversations: mine.length,
      messages: mine.reduce((sum, header) => sum + header.messageCount, 0),
      tokens: {
        prompt: mine.reduce((sum, header) => sum + header.tokens.prompt, 0),
        completion: mine.reduce((sum, header) => sum + header.tokens.completion, 0),
        total: mine.reduce((sum, header) => sum + header.tokens.total, 0),
      },
    });
  }

  delete(userId: string, sessionId: string) {
    return Promise.resolve(this.headers.delete(key(userId, sessionId)));
  }
}

export class MemoryConversationMessages implements ConversationMessages {
  /** By conversation, then messageId. */
  readonly items = new Map<string, Map<string, StoredMessage>>();
  /** By conversation: its system prompt, beside its messages (never among them). */
  readonly systemPrompts = new Map<string, SystemPrompt>();
  /** Set by MemorySessionMemory when both share a conversation's partition, so deleteAll removes its items too. */
  onDeleteAll?: (userId: string, sessionId: string) => number;
  /** Set by the same MemorySessionMemory: where an exchange's entry written with a turn's messages goes. */
  onPutExchange?: (userId: string, sessionId: string, entry: ExchangeEntry) => Promise<void>;

  async put(messages: readonly StoredMessage[], exchange?: ExchangeEntry) {
    const first = messages[0];
    if (exchange !== undefined && first !== undefined) {
      if (this.onPutExchange === undefined)
        throw new Error(
          'An exchange entry goes to the MemorySessionMemory built on these messages: build one.',
        );
      await this.onPutExchange(first.userId, first.sessionId, exchange);
    }
    let added = 0;
    for (const message of messages) {
      const k = key(message.userId, message.sessionId);
      const conversation = this.items.get(k) ?? new Map<string, StoredMessage>();
      this.items.set(k, conversation);
      if (conversation.has(message.id)) continue;
      conversation.set(message.id, structuredClone(message));
      added += 1;
    }
    return added;
  }

  page(userId: string, sessionId: string, options: MessagePageOptions) {
    const all = [...(this.items.get(key(userId, sessionId))?.values() ?? [])]
      .filter((m) => !inGaps(m.ordinal, options.skip ?? []))
      .sort((a, b) => a.ordinal - b.ordinal);
    const selected =
      options.order === 'asc'
        ? all.filter((m) => options.after === undefined || m.ordinal > options.after).slice(0, options.limit)
        : all
            .filter((m) => options.before === undefined || m.ordinal < options.before)
            .reverse()
            .slice(0, options.limit);
    return Promise.resolve(selected.map((message) => structuredClone(message)));
  }

  get(userId: string, sessionId: string, messageId: string) {
    const message = this.items.get(key(userId, sessionId))?.get(messageId);
    return Promise.resolve(message ? structuredClone(message) : undefined);
  }

  setFeedback(userId: string, sessionId: string, messageId: string, feedback: AnswerFeedback | undefined) {
    const message = this.items.get(key(userId, sessionId))?.get(messageId);
    if (message === undefined) return Promise.resolve('missing' as const);
    if (feedback === undefined) delete message.feedback;
    else message.feedback = structuredClone(feedback);
    return Promise.resolve('set' as const);
  }

  alternatives(userId: string, sessionId: string, groups: readonly string[]) {
    const wanted = new Set(groups);
    return Promise.resolve(
      [...(this.items.get(key(userId, sessionId))?.values() ?? [])]
        .filter((m) => m.role === 'user' && m.branch?.alternativeOf !== undefined)
        .filter((m) => wanted.has(m.branch!.alternativeOf!))
        .sort((a, b) => a.ordinal - b.ordinal)
        .map((m) => ({
          chatMessageId: m.chatMessageId,
          ordinal: m.ordinal,
          alternativeOf: m.branch!.alternativeOf!,
        })),
    );
  }

  newestOfBranch(userId: string, sessionId: string, branchId: string) {
    const newest = [...(this.items.get(key(userId, sessionId))?.values() ?? [])]
      .filter((m) => (m.branch?.branchId ?? MAIN_BRANCH) === branchId)
      .sort((a, b) => b.ordinal - a.ordinal)[0];
    return Promise.resolve(
      newest ? { chatMessageId: newest.chatMessageId, ordinal: newest.ordinal } : undefined,
    );
  }

  sessionsMatching(userId: string, q: string, limit: number) {
    const sessions = new Set<string>();
    for (const conversation of this.items.values())
      for (const message of conversation.values())
        if (message.userId === userId && matchesAll(message.content, q)) sessions.add(message.sessionId);
    return Promise.resolve([...sessions].slice(0, limit));
  }

  putSystemPrompt(userId: string, sessionId: string, prompt: SystemPrompt) {
    const k = key(userId, sessionId);
    if (!this.systemPrompts.has(k)) this.systemPrompts.set(k, structuredClone(prompt));
    return Promise.resolve();
  }

  getSystemPrompt(userId: string, sessionId: string) {
    const prompt = this.systemPrompts.get(key(userId, sessionId));
    return Promise.resolve(prompt ? structuredClone(prompt) : undefined);
  }

  deleteAll(userId: string, sessionId: string) {
    const k = key(userId, sessionId);
    const count = (this.items.get(k)?.size ?? 0) + (this.systemPrompts.delete(k) ? 1 : 0);
    this.items.delete(k);
    return Promise.resolve(count + (this.onDeleteAll?.(userId, sessionId) ?? 0));
  }
}

export class MemorySessionMemory implements SessionMemory {
  readonly exchanges = new Map<string, Map<string, ExchangeEntry>>();
  readonly digests = new Map<string, StoredDigest>();
  /** By conversation, then summarizedThrough. */
  readonly checkpoints = new Map<string, Map<number, DigestCheckpoint>>();
  #version = 0;

  /** Shares the conversation's partition with `messages`: its deleteAll removes entries and digest too. */
  constructor(messages?: MemoryConversationMessages) {
    if (messages)
      messages.onPutExchange = (userId, sessionId, entry) => this.putExchange(userId, sessionId, entry);
    if (messages)
      messages.onDeleteAll = (userId, sessionId) => {
        const k = key(userId, sessionId);
        const count =
          (this.exchanges.get(k)?.size ?? 0) +
          (this.digests.has(k) ? 1 : 0) +
          (this.checkpoints.get(k)?.size ?? 0);
        this.exchanges.delete(k);
        this.digests.delete(k);
        this.checkpoints.delete(k);
        return count;
      };
  }

  putExchange(userId: string, sessionId: string, entry: ExchangeEntry) {
    const k = key(userId, sessionId);
    const conversation = this.exchanges.get(k) ?? new Map<string, ExchangeEntry>();
    this.exchanges.set(k, conversation);
    conversation.set(entry.exchangeId, structuredClone(entry));
    return Promise.resolve();
  }

  getExchange(userId: string, sessionId: string, exchangeId: string) {
    const entry = this.exchanges.get(key(userId, sessionId))?.get(exchangeId);
    return Promise.resolve(entry ? structuredClone(entry) : undefined);
  }

  findExchanges(
    userId: string,
    sessionId: string,
    topic: string,
    limit: number,
    path?: { skip: readonly OrdinalGap[] },
  ) {
    const found = [...(this.exchanges.get(key(userId, sessionId))?.values() ?? [])]
      .filter((entry) => !inGaps(entry.ordinal, path?.skip ?? []))
      .filter((entry) => exchangeIsAbout(entry, topic))
      .sort((a, b) => b.ordinal - a.ordinal)
      .slice(0, limit);
    return Promise.resolve(found.map((entry) => structuredClone(entry)));
  }

  pathExchanges(
    userId: string,
    sessionId: string,
    path: { before: number; skip: readonly OrdinalGap[]; limit: number },
  ) {
    const found = [...(this.exchanges.get(key(userId, sessionId))?.values() ?? [])]
      .filter((entry) => entry.ordinal < path.before && !inGaps(entry.ordinal, path.skip))
      .sort((a, b) => b.ordinal - a.ordinal)
      .slice(0, Math.max(1, Math.floor(path.limit)));
    return Promise.resolve(found.map((entry) => structuredClone(entry)));
  }

  putCheckpoint(userId: string, sessionId: string, checkpoint: DigestCheckpoint) {
    const k = key(userId, sessionId);
    const conversation = this.checkpoints.get(k) ?? new Map<number, DigestCheckpoint>();
    this.checkpoints.set(k, conversation);
    if (!conversation.has(checkpoint.summarizedThrough))
      conversation.set(checkpoint.summarizedThrough, structuredClone(checkpoint));
    return Promise.resolve();
  }

  latestCheckpoint(userId: string, sessionId: string, path: { before: number; skip: readonly OrdinalGap[] }) {
    const found = [...(this.checkpoints.get(key(userId, sessionId))?.values() ?? [])]
      .filter((c) => c.summarizedThrough <= path.before && !inGaps(c.lastOrdinal, path.skip))
      .sort((a, b) => b.summarizedThrough - a.summarizedThrough)[0];
    return Promise.resolve(found ? structuredClone(found) : undefined);
  }

  getDigest(userId: string, sessionId: string) {
    const stored = this.digests.get(key(userId, sessionId));
    return Promise.resolve(stored ? structuredClone(stored) : undefined);
  }

  putDigest(userId: string, sessionId: string, digest: SessionDigest, version: string | undefined) {
    const k = key(userId, sessionId);
    if (this.digests.get(k)?.version !== version) return Promise.resolve('conflict' as const);
    this.#version += 1;
    this.digests.set(k, { digest: structuredClone(digest), version: String(this.#version) });
    return Promise.resolve('written' as const);
  }
}
