// Hand-written in-memory implementations of the app's ports, for tests of use-cases and of HTTP handlers in
// process, and createTestApp, which composes them into an App the way shared/app/app.ts composes the adapters.
// Each keeps what it was given so a test can look at it.
import { ApiKeyVerifier } from '../../shared/api-keys/key-verifier.js';
import { MemoryApiKeyStore } from './in-memory-api-keys.js';
import { MemoryAssistants, MemoryProjects } from './in-memory-workspace.js';
import { shapeFields, type ConversationShape } from '../../shared/conversation/conversation-shape.js';
import { CounterUsageReader } from '../../shared/usage/usage-reader.js';
import { MemoryUsageLedger } from './memory-usage-ledger.js';
import { MemorySearchCounter } from './in-memory-search-counter.js';
import { OpenStreams } from '../../shared/streaming/open-streams.js';
import { accountedLlm } from '../../shared/usage/accounted-llm.js';
import { UsageRecorder } from '../../shared/usage/usage-recorder.js';
import { configuredModels } from '../../shared/app/usage-accounting.js';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { App } from '../../shared/app/app.js';
import { loadConfig, type AppConfig } from '../../shared/app/config.js';
import { sharpImages } from '../../shared/attachments/adapters/sharp-images.js';
import { MemoryAttachments, MemoryUploads } from './in-memory-attachments.js';
import {
  foundTurn,
  pathOf,
  placeTurn,
  turnMessagesIn,
  type PathLeaf,
} from '../../shared/conversation/active-path.js';
import { onPath } from '../../shared/conversation/branch-path.js';
import type { ActivePath } from '../../shared/conversation/branches.js';
import type { ChatSession, SessionStore } from '../../shared/conversation/session-store.js';
import type { ConversationMessage, SystemPrompt, TurnRef } from '../../shared/conversation/messages.js';
import type {
  PostedClaim,
  PostedMessage,
  PostedMessageStore,
  PostedStreamTicket,
} from '../../shared/conversation/posted-message-store.js';
import type { RoundRecord, ToolResultRecord, TurnRecord } from '../../shared/chat/contracts/documents.js';
import { TurnCancelSignals } from '../../shared/chat/cancellation/turn-cancel-signals.js';
import type { TurnCancellations } from '../../shared/chat/cancellation/turn-cancellations.js';
import type { TurnStateStore } from '../../shared/chat/turn-state-store.js';
import {
  PathMovedError,
  type AppendOptions,
  type WorkingMemory,
  type WorkingMemoryStore,
} from '../../shared/conversation/working-memory-store.js';
import {
  isFinishedStatus,
  type OrchestrationClient,
  type OrchestrationStatus,
} from '../../shared/durable/orchestration-client.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import type { HealthCheck } from '../../shared/health.js';
import { createIdentityResolver } from '../../shared/identity/identity-resolver.js';
import type { LlmGateway } from '../../shared/llm/llm-gateway.js';
import type { MessagePublisher, OutgoingMessage } from '../../shared/messaging/message-publisher.js';
import type { ClientAccessIssuer } from '../../shared/streaming/client-access.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import type {
  StreamTicketGrant,
  StreamTicketStore,
  StreamTicketTurn,
} from '../../shared/streaming/stream-tickets.js';
import type { TurnEventSink } from '../../shared/streaming/turn-event-sink.js';
import { EventSeqTakenError, type TurnEventStore } from '../../shared/streaming/turn-event-store.js';
import type { UserEventFeed } from '../../shared/streaming/user-event-feed.js';
import { searchKnowledge } from '../../shared/knowledge/search-knowledge.js';
import type { ReadingBudget } from '../../shared/knowledge/document-text.js';
import { createDocumentReader, type DocumentReader } from '../../shared/knowledge/extract-pool.js';
import { searchConversations } from '../../shared/memory/search-conversations.js';
import { createChatTools } from '../../shared/tools/index.js';
import type { ConversationEraser } from '../../shared/history/conversation-eraser.js';
import {
  MemoryConversationHeaders,
  MemoryConversationMessages,
  MemorySessionMemory,
} from './in-memory-history.js';
import {
  MemoryKnowledgeChunks,
  MemoryKnowledgeDocuments,
  MemoryKnowledgeUploads,
} from './in-memory-knowledge.js';
import { MemoryConversationSummaries, MemoryProfileFacts } from './in-memory-memory.js';
import { MemoryQuotaState } from './in-memory-quota.js';
import { MemoryShareStore } from './in-memory-shares.js';
import { MemoryMcpServerStore } from './in-memory-mcp.js';
import { createSdkMcpConnector } from '../../shared/mcp/adapters/sdk-mcp-connector.js';
import { createSdkMcpAuthorizer } from '../../shared/mcp/adapters/sdk-mcp-oauth.js';
import type { AddressLookup } from '../../shared/mcp/adapters/guarded-fetch.js';
import { createSecretBox } from '../../shared/mcp/secret-box.js';
import { revokingShares } from '../../shared/sharing/share-links.js';

export class MemorySessions implements SessionStore {
  readonly sessions: ChatSession[] = [];
  constructor(private readonly now: () => Date = () => new Date('2026-11-22T10:00:00.000Z')) {}
  /** A `sessionId` lets a test name the session it creates; the product's store always makes a new one. */
  create(userId: string, shapeOrId?: ConversationShape | string) {
    const sessionId = typeof shapeOrId === 'string' ? shapeOrId : undefined;
    const shape = typeof shapeOrId === 'object' ? shapeFields(shapeOrId) : {};
    const session: ChatSession = {
      sessionId: sessionId ?? randomUUID(),
      userId,
      createdAt: this.now().toISOString(),
      ...shape,
    };
    this.sessions.push(session);
    return Promise.resolve(session);
  }
  markApprovals(userId: string, sessionId: string) {
    const index = this.sessions.findIndex((s) => s.userId === userId && s.sessionId === sessionId);
    const session = this.sessions[index];
    if (session !== undefined) this.sessions[index] = { ...session, approvals: true };
    return Promise.resolve();
  }

  setProject(userId: string, sessionId: string, projectId: string | null) {
    const index = this.sessions.findIndex((s) => s.userId === userId && s.sessionId === sessionId);
    const session = this.sessions[index];
    if (session === undefined || this.deleting.has(`${userId}/${sessionId}`)) return Promise.resolve(false);
    const { projectId: _old, ...rest } = session;
    this.sessions[index] = projectId === null ? rest : { ...rest, projectId };
    return Promise.resolve(true);
  }
  /** Sessions whose conversation is being deleted, or was (`${userId}/${sessionId}`): their tombstones. */
  readonly deleting = new Set<string>();
  /** Of those, the ones whose delete finished. */
  readonly deleted = new Set<string>();
  /** Tombstone reads (isDeleted), for tests that count what a check costs. */
  tombstoneReads = 0;
  /** Who holds each client-chosen id, for good (as the Cosmos DB adapter's claim documents). */
  readonly claims = new Map<string, string>();
  async claim(userId: string, sessionId: string) {
    const owner = this.claims.get(sessionId) ?? userId;
    this.claims.set(sessionId, owner);
    if (owner !== userId) return undefined;
    const own = this.sessions.find((s) => s.userId === userId && s.sessionId === sessionId);
    if (own === undefined) return this.create(userId, sessionId);
    return this.find(userId, sessionId);
  }
  release(userId: string, sessionId: string) {
    const index = this.sessions.findIndex((s) => s.userId === userId && s.sessionId === sessionId);
    if (index >= 0) this.sessions.splice(index, 1);
    return Promise.resolve();
  }
  claimant(sessionId: string) {
    return Promise.resolve(this.claims.get(sessionId));
  }
  find(userId: string, sessionId: string) {
    if (this.deleting.has(`${userId}/${sessionId}`)) return Promise.resolve(undefined);
    return Promise.resolve(this.sessions.find((s) => s.userId === userId && s.sessionId === sessionId));
  }
  isDeleted(userId: string, sessionId: string) {
    this.tombstoneReads += 1;
    return Promise.resolve(this.deleting.has(`${userId}/${sessionId}`));
  }
  markDeleting(userId: string, sessionId: string) {
    const key = `${userId}/${sessionId}`;
    const found = this.sessions.some((s) => s.userId === userId && s.sessionId === sessionId);
    if (!found || this.deleted.has(key)) return Promise.resolve(false);
    this.deleting.add(key);
    return Promise.resolve(true);
  }
  markDeleted(userId: string, sessionId: string) {
    const key = `${userId}/${sessionId}`;
    const found = this.sessions.some((s) => s.userId === userId && s.sessionId === sessionId);
    if (found) {
      this.deleting.add(key);
      this.deleted.add(key);
    }
    return Promise.resolve(found);
  }
}

/**
 * Posted messages by session and chatMessageId; the first claim of a key wins, as with Cosmos DB's create. Their
 * stream tickets go to `tickets`, keyed as a ticket store finds them.
 */
export class MemoryPostedMessages implements PostedMessageStore {
  readonly records = new Map<string, PostedMessage>();
  /** Set to make the next claim fail, as a store outage would. */
  failNext: Error | undefined;
  /**
   * `sessions`: the sessions a claim reads beside its write, as the Cosmos DB adapter's batch does (none: every
   * session lives).
   */
  constructor(
    readonly tickets: MemoryStreamTickets = new MemoryStreamTickets(),
    private readonly sessions?: MemorySessions,
  ) {}
  claim(message: PostedMessage, ticket?: PostedStreamTicket): Promise<PostedClaim> {
    if (this.failNext !== undefined) {
      const error = this.failNext;
      this.failNext = undefined;
      return Promise.reject(error);
    }
    const { userId, sessionId, chatMessageId } = message;
    let session: ChatSession | undefined;
    if (this.sessions !== undefined) {
      session = this.sessions.sessions.find((s) => s.userId === userId && s.sessionId === sessionId);
      if (session === undefined) return Promise.resolve({ kind: 'no-session' });
      if (this.sessions.deleting.has(`${userId}/${sessionId}`))
        return Promise.resolve({ kind: 'session-deleted' });
    }
    const key = `${userId}/${sessionId}/${chatMessageId}`;
    // The session comes back with the record, as the Cosmos DB adapter's batch (or its re-post's read) gives it.
    if (!this.records.has(key)) this.records.set(key, structuredClone(message));
    if (ticket !== undefined)
      this.tickets.grants.set(`${sessionId}/${ticket.sha256}`, {
        userId,
        sessionId,
        chatMessageId,
        expiresAt: ticket.expiresAt,
      });
    return Promise.resolve({
      kind: 'recorded',
      posted: structuredClone(this.records.get(key) as PostedMessage),
      ...(session === undefined ? {} : { session: structuredClone(session) }),
    });
  }
  find(userId: string, sessionId: string, chatMessageId: string) {
    const record = this.records.get(`${userId}/${sessionId}/${chatMessageId}`);
    return Promise.resolve(record ? structuredClone(record) : undefined);
  }
  latest(userId: string, sessionId: string, count: number) {
    const records = [...this.records.values()]
      .filter((record) => record.userId === userId && record.sessionId === sessionId)
      .sort((a, b) => b.postedAt.localeCompare(a.postedAt))
      .slice(0, count);
    return Promise.resolve(structuredClone(records));
  }
}

/** Stops recorded per turn, the first request's time kept, as the Cosmos DB adapter keeps them; reads counted. */
export class MemoryTurnCancellations implements TurnCancellations {
  readonly requests = new Map<string, { ref: TurnRef; requestedAt: string }>();
  reads = 0;
  request(ref: TurnRef, requestedAt: string) {
    const key = `${ref.sessionId}/${ref.chatMessageId}`;
    if (!this.requests.has(key)) this.requests.set(key, { ref: { ...ref }, requestedAt });
    return Promise.resolve();
  }
  isRequested(ref: TurnRef) {
    this.reads += 1;
    const found = this.requests.get(`${ref.sessionId}/${ref.chatMessageId}`);
    return Promise.resolve(found !== undefined && found.ref.userId === ref.userId);
  }
}

/** Stream tickets by session and hash, as the front door's posted records keep them. */
export class MemoryStreamTickets implements StreamTicketStore {
  readonly grants = new Map<string, StreamTicketGrant>();
  /** Keeps a grant as a post would (a test's own, e.g. an expired one). */
  save(ticketSha256: string, grant: StreamTicketGrant) {
    this.grants.set(`${grant.sessionId}/${ticketSha256}`, { ...grant });
    return Promise.resolve();
  }
  find(turn: StreamTicketTurn, ticketSha256: string) {
    const grant = this.grants.get(`${turn.sessionId}/${ticketSha256}`);
    const mine = grant?.userId === turn.userId && grant.chatMessageId === turn.chatMessageId;
    return Promise.resolve(mine ? { ...grant } : undefined);
  }
}

export class MemoryTurns implements TurnStateStore {
  readonly turns = new Map<string, TurnRecord>();
  readonly results = new Map<string, ToolResultRecord>();
  /** The session of each result (by its key), so a deleted session's are erased even after its turn record. */
  readonly resultSessions = new Map<string, string>();
  #versions = 0;
  get(r: TurnRef) {
    const turn = this.turns.get(r.chatMessageId);
    return Promise.resolve(
      turn === undefined ? undefined : { ...structuredClone(turn), version: String(++this.#versions) },
    );
  }
  addRound(turn: TurnRecord, round: RoundRecord) {
    const stored = this.turns.get(turn.chatMessageId);
    if (stored === undefined) {
      const { version: _version, ...record } = turn as TurnRecord & { version?: string };
      this.turns.set(turn.chatMessageId, { ...structuredClone(record), rounds: [round] });
      return Promise.resolve(round);
    }
    const existing = stored.rounds.find((x) => x.round === round.round);
    if (existing) return Promise.resolve(existing);
    stored.rounds.push(round);
    return Promise.resolve(round);
  }
  listToolResults(r: TurnRef) {
    return Promise.resolve(
      [...this.results.entries()]
        .filter(([key]) => key.startsWith(`${r.chatMessageId}/`))
        .map(([, result]) => result)
        .sort((a, b) => a.round - b.round || a.index - b.index),
    );
  }
  getToolResult(r: TurnRef, round: number, index: number) {
    return Promise.resolve(this.results.get(`${r.chatMessageId}/${round}/${index}`));
  }
  putToolResult(r: TurnRef, result: ToolResultRecord) {
    this.resultSessions.set(`${r.chatMessageId}/${result.round}/${result.index}`, r.sessionId);
    this.results.set(`${r.chatMessageId}/${result.round}/${result.index}`, result);
    return Promise.resolve();
  }
  readonly answers = new Set<string>();
  recordApprovalAnswer(r: TurnRef, approvalId: string) {
    const key = `${r.chatMessageId}/${approvalId}`;
    const first = !this.answers.has(key);
    this.answers.add(key);
    return Promise.resolve(first);
  }
  readonly parked = new Map<string, string>();
  markParked(r: TurnRef) {
    this.parked.set(r.sessionId, r.chatMessageId);
    return Promise.resolve();
  }
  parkedTurn(sessionId: string) {
    return Promise.resolve(this.parked.get(sessionId));
  }
}

/**
 * The event store and the live sink in one, for one turn: the stored batches (by first seq, created once, as the
 * Cosmos adapter does), and what was sent live, in order. Events of a second turn are refused rather than mixed
 * in.
 */
export class MemoryEvents implements TurnEventStore, TurnEventSink {
  readonly stored = new Map<number, ChatEvent>();
  readonly batches = new Map<number, ChatEvent[]>();
  readonly sent: ChatEvent[] = [];
  #turn: string | undefined;
  append(events: readonly ChatEvent[]) {
    const first = events[0];
    if (first === undefined) return Promise.reject(new Error('An empty batch cannot be stored.'));
    this.#turn ??= first.chatMessageId;
    if (events.some((event) => event.chatMessageId !== this.#turn))
      return Promise.reject(new Error('MemoryEvents holds the events of one turn only.'));
    const existing = this.batches.get(first.seq);
    if (existing !== undefined) {
      return isDeepStrictEqual(existing, [...events])
        ? Promise.resolve('already-stored' as const)
        : Promise.reject(new EventSeqTakenError(first.chatMessageId, first.seq));
    }
    if (events.some((event) => this.stored.has(event.seq)))
      return Promise.reject(new Error(`A batch from seq ${first.seq} overlaps stored events.`));
    this.batches.set(first.seq, structuredClone([...events]));
    for (const event of events) this.stored.set(event.seq, event);
    return Promise.resolve('stored' as const);
  }
  read(sessionId: string, chatMessageId: string, afterSeq: number) {
    return Promise.resolve(
      [...this.stored.values()]
        .filter((e) => e.sessionId === sessionId && e.chatMessageId === chatMessageId && e.seq > afterSeq)
        .sort((a, b) => a.seq - b.seq),
    );
  }
  send(_turn: { userId: string; sessionId: string }, events: readonly ChatEvent[]) {
    for (const event of events)
      if (!this.stored.has(event.seq))
        return Promise.reject(new Error(`Event ${event.seq} was sent before stored.`));
    this.sent.push(...events);
    return Promise.resolve();
  }
}

/**
 * Working memory of one conversation without a byte bound: `messages` holds every committed message, of every
 * branch; a load answers the active path's as the window and the others as off-path messages, and commits and
 * moves follow the same rules as the Cosmos DB adapter (active-path.ts).
 */
export class MemoryWorkingMemory implements WorkingMemoryStore {
  messages: ConversationMessage[] = [];
  /** The conversation's system prompt, once a commit gave one (the first stays, as in the Cosmos DB adapter). */
  systemPrompt: SystemPrompt | undefined;
  /** The active path; undefined until a commit named one (then: the newest turn, as for an older document). */
  path: ActivePath | undefined;
  /** The newest digest revision announced, as the hot store's entry keeps it. */
  digestRevision: number | undefined;
  #version = 0;
  load(userId: string, sessionId: string) {
    return Promise.resolve(this.#memory(userId, sessionId));
  }
  announceDigest(_userId: string, _sessionId: string, revision: number) {
    if ((this.digestRevision ?? 0) < revision) {
      this.digestRevision = revision;
      this.#version += 1;
    }
    return Promise.resolve();
  }
  append(
    userId: string,
    sessionId: string,
    messages: readonly ConversationMessage[],
    _base?: WorkingMemory,
    options?: AppendOptions,
  ) {
    const current = this.#memory(userId, sessionId);
    const placed = placeTurn(current, messages, options?.branch, Number.POSITIVE_INFINITY);
    if (placed.kind === 'parent-moved') return Promise.reject(new PathMovedError(placed.parentChatMessageId));
    if (placed.kind === 'placed') {
      this.messages = [...this.messages, ...placed.state.messages.filter((m) => !this.#has(m.messageId))];
      this.path = placed.state.path;
      this.systemPrompt ??= options?.systemPrompt;
      this.#version += 1;
    }
    return Promise.resolve(this.#memory(userId, sessionId));
  }
  findTurn(userId: string, sessionId: string, chatMessageId: string) {
    const all = { messages: this.messages, offPath: [] };
    const turn = turnMessagesIn(all, chatMessageId);
    const first = turn[0]?.ordinal;
    const previous = this.messages.find((m) => first !== undefined && m.ordinal === first - 1);
    return Promise.resolve(foundTurn(turn, previous?.chatMessageId ?? null));
  }
  showPath(userId: string, sessionId: string, leaf: PathLeaf) {
    this.path = pathOf(leaf);
    this.#version += 1;
    return Promise.resolve(this.#memory(userId, sessionId));
  }
  #has(messageId: string) {
    return this.messages.some((m) => m.messageId === messageId);
  }
  #memory(userId: string, sessionId: string): WorkingMemory {
    const sorted = [...this.messages].sort((a, b) => (a.ordinal ?? 0) - (b.ordinal ?? 0));
    const leaf = this.path;
    const last = leaf?.lastOrdinal;
    const window =
      leaf === undefined || last === undefined
        ? sorted
        : sorted.filter((m) => m.ordinal !== undefined && onPath(m.ordinal, leaf.branch, last));
    const offPath = sorted.filter((m) => !window.includes(m));
    return {
      userId,
      sessionId,
      messages: structuredClone(window),
      // Messages a test put in directly count up to their ordinals, as committed ones would.
      messageCount: Math.max(this.messages.length, ...this.messages.map((m) => (m.ordinal ?? -1) + 1)),
      version: String(this.#version),
      ...(this.systemPrompt ? { systemPrompt: structuredClone(this.systemPrompt) } : {}),
      ...(leaf ? { path: structuredClone(leaf) } : {}),
      ...(offPath.length > 0 ? { offPath: structuredClone(offPath) } : {}),
      ...(this.digestRevision === undefined ? {} : { digestRevision: this.digestRevision }),
    };
  }
}

export class RecordingPublisher implements MessagePublisher {
  readonly published: { entity: string; message: OutgoingMessage }[] = [];
  publish(entity: string, messages: OutgoingMessage | readonly OutgoingMessage[]) {
    for (const message of ([] as OutgoingMessage[]).concat(messages))
      this.published.push({ entity, message });
    return Promise.resolve();
  }
  close() {
    return Promise.resolve();
  }
}

/** A feed whose subscribers get what the test pushes to their user. */
export class MemoryFeed implements UserEventFeed {
  private readonly listeners = new Map<string, Set<(event: ChatEvent) => void>>();
  subscribe({ userId }: { userId: string; sessionId: string }, onEvent: (event: ChatEvent) => void) {
    const forUser = this.listeners.get(userId) ?? new Set();
    this.listeners.set(userId, forUser);
    forUser.add(onEvent);
    return Promise.resolve({ close: () => Promise.resolve(void forUser.delete(onEvent)) });
  }
  push(userId: string, event: ChatEvent): void {
    for (const listener of this.listeners.get(userId) ?? []) listener(event);
  }
}

/** Client URLs named after the user and session, as the service's would be. */
export class FakeClientAccess implements ClientAccessIssuer {
  issue({ userId, sessionId }: { userId: string; sessionId: string }) {
    return Promise.resolve({
      url: `ws://web-pubsub.test/client/hubs/chat?user=${encodeURIComponent(userId)}&session=${sessionId}`,
      expiresAt: '2026-11-22T11:00:00.000Z',
    });
  }
}

/** Orchestrations that start, and finish when the test says so. */
export class FakeOrchestrations implements OrchestrationClient {
  readonly instances = new Map<string, OrchestrationStatus>();
  startNew(name: string, options: { instanceId: string; input?: unknown }) {
    const existing = this.instances.get(options.instanceId);
    if (existing && !isFinishedStatus(existing.runtimeStatus))
      return Promise.reject(new ConflictError(`${options.instanceId} is running`));
    const at = new Date(0);
    this.instances.set(options.instanceId, {
      instanceId: options.instanceId,
      name,
      runtimeStatus: 'Running',
      input: options.input,
      output: null,
      customStatus: null,
      createdTime: at,
      lastUpdatedTime: at,
    });
    return Promise.resolve(options.instanceId);
  }
  getStatus(instanceId: string) {
    return Promise.resolve(this.instances.get(instanceId));
  }
  async waitForCompletion(instanceId: string) {
    const status = this.instances.get(instanceId);
    if (status === undefined) throw new NotFoundError(instanceId);
    return Promise.resolve(status);
  }
  raiseEvent() {
    return Promise.resolve();
  }
  terminate(instanceId: string, reason: string) {
    const status = this.instances.get(instanceId);
    if (status === undefined) return Promise.reject(new NotFoundError(instanceId));
    if (!isFinishedStatus(status.runtimeStatus))
      Object.assign(status, { runtimeStatus: 'Terminated', output: reason });
    return Promise.resolve();
  }
  purge(instanceId: string) {
    const status = this.instances.get(instanceId);
    if (status !== undefined && !isFinishedStatus(status.runtimeStatus))
      return Promise.reject(new ConflictError(`${instanceId} is ${status.runtimeStatus}`));
    return Promise.resolve(this.instances.delete(instanceId));
  }
}

/**
 * The eraser over the other fakes, as the Cosmos DB adapter is over their containers: a session's turn data (its
 * working memory, turn records, tool results, events and stream tickets) and its posted records.
 */
export class MemoryConversationEraser implements ConversationEraser {
  constructor(
    private readonly fakes: {
      posted: MemoryPostedMessages;
      tickets: MemoryStreamTickets;
      events: MemoryEvents;
      turns: MemoryTurns;
      workingMemory: MemoryWorkingMemory;
      cancellations: MemoryTurnCancellations;
    },
  ) {}
  postedMessageIds(userId: string, sessionId: string) {
    return Promise.resolve(
      [...this.fakes.posted.records.values()]
        .filter((record) => record.userId === userId && record.sessionId === sessionId)
        .sort((a, b) => a.postedAt.localeCompare(b.postedAt))
        .map((record) => record.chatMessageId),
    );
  }
  eraseTurnData(sessionId: string) {
    const { events, turns, workingMemory } = this.fakes;
    let count = 0;
    const drop = <V>(map: Map<string | number, V>, belongs: (key: string | number, value: V) => boolean) => {
      for (const [key, value] of [...map]) if (belongs(key, value) && map.delete(key)) count += 1;
    };
    const turnIds = new Set(
      [...turns.turns.values()].filter((t) => t.sessionId === sessionId).map((t) => t.chatMessageId),
    );
    drop(turns.turns, (_key, turn) => turn.sessionId === sessionId);
    drop(
      turns.results,
      (key) =>
        turnIds.has(String(key).split('/')[0] ?? '') || turns.resultSessions.get(String(key)) === sessionId,
    );
    drop(events.stored, (_key, event) => event.sessionId === sessionId);
    drop(events.batches, (_key, batch) => batch[0]?.sessionId === sessionId);
    drop(this.fakes.cancellations.requests, (key) => String(key).startsWith(`${sessionId}/`));
    // The fake working memory holds one conversation.
    if (workingMemory.messages.length > 0) count += 1;
    workingMemory.messages = [];
    workingMemory.systemPrompt = undefined;
    workingMemory.path = undefined;
    return Promise.resolve(count);
  }
  erasePosted(userId: string, sessionId: string) {
    // A posted record's stream tickets go with it.
    for (const [key, grant] of [...this.fakes.tickets.grants])
      if (grant.userId === userId && grant.sessionId === sessionId) this.fakes.tickets.grants.delete(key);
    let count = 0;
    for (const [key, record] of [...this.fakes.posted.records])
      if (record.userId === userId && record.sessionId === sessionId && this.fakes.posted.records.delete(key))
        count += 1;
    return Promise.resolve(count);
  }
}

/** The settings the local runtime gives the app, plus the test's own. */
export function testConfig(settings: Record<string, string> = {}): AppConfig {
  return loadConfig({
    APP_ENV: 'local',
    COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
    COSMOS_KEY: 'a-key',
    WEBPUBSUB_CONNECTION_STRING: 'Endpoint=http://127.0.0.1:7071/webpubsub;AccessKey=a-key;Version=1.0;',
    LLM_BASE_URL: 'http://127.0.0.1:7071/offline-model/v1',
    LLM_CHAT_MODEL: 'offline',
    LLM_EMBEDDING_MODEL: 'offline-embedding',
    ...settings,
  });
}

export interface TestApp extends App {
  fakes: {
    sessions: MemorySessions;
    posted: MemoryPostedMessages;
    tickets: MemoryStreamTickets;
    publisher: RecordingPublisher;
    events: MemoryEvents;
    feed: MemoryFeed;
    workingMemory: MemoryWorkingMemory;
    turns: MemoryTurns;
    cancellations: MemoryTurnCancellations;
    orchestrations: FakeOrchestrations;
    /** Long-term history, as the chat turn, the history worker and the History API see it. */
    headers: MemoryConversationHeaders;
    longTermMessages: MemoryConversationMessages;
    sessionMemory: MemorySessionMemory;
    eraser: MemoryConversationEraser;
    /** Shared snapshots and their owners' links. */
    shares: MemoryShareStore;
    /** Long-term memory: conversation summaries and the profile's facts. */
    summaries: MemoryConversationSummaries;
    facts: MemoryProfileFacts;
    /** The knowledge base: documents, their chunks (searched where ready) and upload bytes. */
    knowledgeDocuments: MemoryKnowledgeDocuments;
    knowledgeChunks: MemoryKnowledgeChunks;
    knowledgeUploads: MemoryKnowledgeUploads;
    /** Each model call's record and the counters per day, month and conversation. */
    usage: MemoryUsageLedger;
    /** Users' MCP servers. */
    mcpServers: MemoryMcpServerStore;
  };
}

/** An App over in-memory ports (dev identities), with the real use-cases above them. */
const readers = new Map<string, DocumentReader>();

/**
 * One reader per reading budget for the whole test file: a worker's start takes seconds, and idle workers do not
 * keep the process alive.
 */
function sharedReader(budget: ReadingBudget): DocumentReader {
  const key = JSON.stringify(budget);
  let reader = readers.get(key);
  if (reader === undefined) {
    reader = createDocumentReader(budget);
    readers.set(key, reader);
  }
  return reader;
}

export function createTestApp(
  options: {
    settings?: Record<string, string>;
    healthChecks?: HealthCheck[];
    llm?: LlmGateway;
    /** Records the model calls made in a usage scope in `fakes.usage`, as the app does. */
    accounted?: boolean;
    /** How MCP servers' host names resolve (default: the system's resolver). */
    mcpLookup?: AddressLookup;
  } = {},
): TestApp {
  const config = testConfig(options.settings);
  const longTermMessages = new MemoryConversationMessages();
  const knowledgeDocuments = new MemoryKnowledgeDocuments();
  const sessions = new MemorySessions();
  const tickets = new MemoryStreamTickets();
  const fakes = {
    sessions,
    posted: new MemoryPostedMessages(tickets, sessions),
    tickets,
    publisher: new RecordingPublisher(),
    events: new MemoryEvents(),
    feed: new MemoryFeed(),
    workingMemory: new MemoryWorkingMemory(),
    turns: new MemoryTurns(),
    cancellations: new MemoryTurnCancellations(),
    orchestrations: new FakeOrchestrations(),
    headers: new MemoryConversationHeaders(),
    longTermMessages,
    // Beside the messages, as in Cosmos DB: deleting a conversation's messages deletes its index and digest.
    sessionMemory: new MemorySessionMemory(longTermMessages),
    summaries: new MemoryConversationSummaries(),
    facts: new MemoryProfileFacts(),
    knowledgeDocuments,
    // Search sees only the chunks of documents whose record is ready, as the Cosmos DB adapter does.
    knowledgeChunks: new MemoryKnowledgeChunks(knowledgeDocuments),
    knowledgeUploads: new MemoryKnowledgeUploads(),
    usage: new MemoryUsageLedger(),
    shares: new MemoryShareStore(),
    mcpServers: new MemoryMcpServerStore(),
    attachments: new MemoryAttachments(),
  };
  const history = {
    headers: fakes.headers,
    messages: fakes.longTermMessages,
    sessionMemory: fakes.sessionMemory,
    eraser: new MemoryConversationEraser(fakes),
  };
  // As in the app: deleting a conversation revokes its share links.
  const eraser = revokingShares(history.eraser, fakes.shares);
  const unreachableModel = (): never => {
    throw new Error('This test app has no model: pass one as `llm`.');
  };
  const model: LlmGateway = options.llm ?? {
    streamChat: unreachableModel,
    completeJson: unreachableModel,
    embed: unreachableModel,
    probe: unreachableModel,
  };
  const llm =
    options.accounted === true
      ? accountedLlm(model, new UsageRecorder(fakes.usage, config.usage.prices), configuredModels(config.llm))
      : model;
  const search = { summaries: fakes.summaries, headers: fakes.headers, llm, relevance: config.search };
  const knowledgeSearch = { chunks: fakes.knowledgeChunks, llm, relevance: config.search };
  const reader = sharedReader(config.knowledge.reading);
  const cancellations = new TurnCancelSignals(fakes.cancellations, {
    pollIntervalMs: config.chat.cancelPollMs,
    isDeleted: (ref) => fakes.sessions.isDeleted(ref.userId, ref.sessionId),
  });
  const usageReader = new CounterUsageReader(fakes.usage);
  const quotaState = new MemoryQuotaState();
  const apiKeyStore = new MemoryApiKeyStore();
  const apiKeyVerifier = config.apiKeys.enabled
    ? new ApiKeyVerifier(apiKeyStore, { cacheMs: config.apiKeys.cacheMs })
    : undefined;
  return {
    config,
    identity: createIdentityResolver(config.auth, { apiKeys: apiKeyVerifier }),
    apiKeys: {
      services: { store: apiKeyStore, config: config.apiKeys, forget: (id) => apiKeyVerifier?.forget(id) },
      verifier: apiKeyVerifier,
    },
    // Erasing a user sweeps the Cosmos DB containers: the local runtime's tests cover it, not these fakes.
    account: {
      get database(): never {
        throw new Error('Erasing a user needs Cosmos DB: run it on the local runtime.');
      },
      get exports(): never {
        throw new Error('Data archives need Cosmos DB and Blob Storage: run them on the local runtime.');
      },
      get knowledgeText(): never {
        throw new Error('Data archives need Cosmos DB and Blob Storage: run them on the local runtime.');
      },
      settings: config.account,
    },
    attachments: {
      store: fakes.attachments,
      uploads: new MemoryUploads(),
      images: sharpImages,
      config: config.attachments,
      quota: config.quota,
      leases: quotaState,
    },
    chat: {
      sessions: fakes.sessions,
      posted: fakes.posted,
      publisher: fakes.publisher,
      cancellations,
      turn: {
        workingMemory: fakes.workingMemory,
        turns: fakes.turns,
        events: fakes.events,
        sink: fakes.events,
        llm,
        tools: createChatTools({
          messages: fakes.longTermMessages,
          sessionMemory: fakes.sessionMemory,
          workingMemory: fakes.workingMemory,
          searchConversations: (userId, query, limit, options) =>
            searchConversations(search, userId, query, limit, options),
          searchKnowledge: (userId, query, limit) => searchKnowledge(knowledgeSearch, userId, query, limit),
        }),
        publisher: fakes.publisher,
        headers: fakes.headers,
        sessions: fakes.sessions,
        eraser,
        sessionMemory: fakes.sessionMemory,
        profile: fakes.facts,
        cancellation: cancellations,
        settings: {
          promptTokenBudget: config.chat.promptTokenBudget,
          maxOutputTokens: config.chat.maxOutputTokens,
          coalescing: { flushIntervalMs: 0, flushMaxChars: config.streaming.flushMaxChars },
          profileTimeoutMs: config.chat.profileTimeoutMs,
        },
      },
    },
    streaming: {
      turnEvents: fakes.events,
      feed: fakes.feed,
      clientAccess: new FakeClientAccess(),
      tickets: fakes.tickets,
      openStreams: new OpenStreams(config.streaming.streamsPerUser),
    },
    history: {
      worker: {
        headers: fakes.headers,
        messages: fakes.longTermMessages,
        sessionMemory: fakes.sessionMemory,
        llm,
        workingMemory: fakes.workingMemory,
        sessions: fakes.sessions,
        settings: { promptTokenBudget: config.chat.promptTokenBudget },
      },
      headers: history.headers,
      messages: history.messages,
      sessionMemory: history.sessionMemory,
      workingMemory: fakes.workingMemory,
      sessions: fakes.sessions,
      eraser,
      usage: fakes.usage,
    },
    memory: {
      worker: { summaries: fakes.summaries, facts: fakes.facts, llm, sessions: fakes.sessions },
      summaries: fakes.summaries,
      facts: fakes.facts,
      search,
    },
    knowledge: {
      documents: fakes.knowledgeDocuments,
      chunks: fakes.knowledgeChunks,
      uploads: fakes.knowledgeUploads,
      // The real reading workers, shared by the test apps of a file: they start only if a test ingests a document.
      reader,
      publisher: fakes.publisher,
      llm,
      settings: config.knowledge,
      search: knowledgeSearch,
    },
    quota: {
      config: config.quota,
      state: quotaState,
      usage: usageReader,
      searches: { perMinute: config.searchesPerMinute, counter: new MemorySearchCounter() },
    },
    usage: { ledger: fakes.usage, reader: usageReader, prices: config.usage.prices },
    sharing: { shares: fakes.shares },
    mcp: {
      store: fakes.mcpServers,
      connector: createSdkMcpConnector(
        { allowLoopback: config.env === 'local', allowedHosts: config.mcp.allowedHosts },
        options.mcpLookup,
      ),
      authorizer: createSdkMcpAuthorizer(
        { allowLoopback: config.env === 'local', allowedHosts: config.mcp.allowedHosts },
        options.mcpLookup,
      ),
      box: createSecretBox(config.mcp.secretsKey),
      config: config.mcp,
      operatorTools: new Map(),
    },
    workspace: {
      assistants: {
        store: new MemoryAssistants(),
        models: config.models,
        publishers: config.assistants.publishers,
      },
      projects: { store: new MemoryProjects() },
    },
    orchestrations: () => fakes.orchestrations,
    healthChecks: () => options.healthChecks ?? [],
    close: () => Promise.resolve(),
    fakes: { ...fakes, ...history },
  };
}
