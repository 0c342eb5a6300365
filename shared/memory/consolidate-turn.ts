// The memory worker's use-case: consolidates one finished turn (a `message-completed` event) into long-term memory,
// the conversation's summary with its embedding and the user's profile facts, idempotently and along the path the
// user keeps through the conversation's branches (memory-path.ts).
import type { MessageCompleted } from '../conversation/message-completed.js';
import type { SessionStore } from '../conversation/session-store.js';
import { inScopes, scopeField, USER_SCOPE, type MemoryScope } from '../conversation/memory-scope.js';
import { ensureError, ValidationError } from '../errors.js';
import { LlmError, type LlmGateway } from '../llm/llm-gateway.js';
import type { Logger } from '../logger.js';
import { SpendRefusedError } from '../usage/spend-gated-llm.js';
import { applyRecord } from './apply-changes.js';
import { newFactId } from './profile-apply.js';
import {
  consolidationId,
  type ConsolidationRecord,
  type ConversationSummaryDocument,
  type FactSource,
  type SummarySnapshot,
} from './contracts.js';
import type { ConversationSummaries, StoredSummary } from './conversation-summaries.js';
import { forgetConversation } from './forget-memories.js';
import { proposeProfileChanges, summariseConversation } from './memory-llm.js';
import {
  followPath,
  followsPath,
  onFollowedPath,
  snapshotOf,
  summaryBase,
  type TurnPath,
} from './memory-path.js';
import type { ProfileFacts } from './profile-facts.js';
import { mergeProfileChanges, type DroppedChange } from './profile-merge.js';

export interface MemoryWorkerServices {
  summaries: ConversationSummaries;
  facts: ProfileFacts;
  llm: LlmGateway;
  /** A conversation deleted (or being deleted) has no session: it keeps no memory. */
  sessions: Pick<SessionStore, 'find'>;
  now?: () => Date;
}

/** How often Service Bus has delivered the event, this time included (1 when unknown). */
export interface Delivery {
  deliveryCount: number;
}

/**
 * Deliveries over which a model failure is retried before the turn is left out of that part of memory (with a
 * warning): an outage of a few minutes is ridden out, and a model that keeps failing on one turn never sends a valid
 * event to the dead-letter queue, nor holds up the conversation's later turns (the subscription has sessions).
 */
export const MODEL_DELIVERIES = 3;

export { newFactId };

/** Conditional summary writes tried before giving up (the event is then redelivered). */
const SUMMARY_ATTEMPTS = 3;

export type SummaryOutcome = 'written' | 'already-covered' | 'left-out';
export type ProfileOutcome = 'applied' | 'already-applied' | 'left-out';
export type ConsolidationOutcome =
  | { status: 'skipped'; reason: 'failed-turn' | 'memory-off' | 'conversation-deleted' }
  | { status: 'consolidated'; summary: SummaryOutcome; profile: ProfileOutcome };

type Log = Pick<Logger, 'log' | 'warn'>;

/** What the memory worker reads of a completed turn. */
interface Turn {
  label: string;
  /** Everything the user wrote in the turn: the profile's only source. */
  userText: string;
  /** The assistant's answer, without its tool calls and results. */
  answer: string;
  source: FactSource;
  /** The highest ordinal of the turn's messages: a summary covering it has the turn. */
  lastOrdinal: number;
  completedAt: string;
  /** Its place in the conversation's tree. */
  path: TurnPath;
  /** Where what it teaches is kept. */
  scope: MemoryScope;
}

/** The summary part's outcome, and the summary as it stands after the turn (kept in the turn's record). */
interface SummaryResult {
  outcome: SummaryOutcome;
  after?: SummarySnapshot;
}

export async function consolidateTurn(
  services: MemoryWorkerServices,
  event: MessageCompleted,
  log: Log,
  delivery: Delivery = { deliveryCount: 1 },
): Promise<ConsolidationOutcome> {
  const { userId, sessionId } = event;
  const label = `turn ${event.chatMessageId} of session ${sessionId}`;
  if (event.outcome === 'failed') {
    log.log(`Memory: ${label} failed; there is nothing to remember.`);
    return { status: 'skipped', reason: 'failed-turn' };
  }
  if (event.useMemory === false || event.memoryMode === 'read') {
    const mode = event.useMemory === false ? 'use_memory false' : 'memory "read"';
    log.log(`Memory: ${label} was sent with ${mode}; nothing is learned from it.`);
    return { status: 'skipped', reason: 'memory-off' };
  }
  const turn = readTurn(event, label);

  const model = modelPolicy(label, delivery, log);
  const stored = await services.summaries.get(userId, sessionId);
  // An older turn replayed late (from the dead-letter queue): memory has moved on past it, maybe onto another path,
  // which it must not leave for this turn's. Its profile changes are made only if it is on that path.
  const replayed = stored !== undefined && stored.summary.coveredThrough > turn.lastOrdinal;
  const follows = replayed || followsPath(stored?.summary, event.chatMessageId, turn.path);
  if (!follows) {
    // Before either part: the profile changes of this turn are decided against the path's facts, and the summary,
    // written last, names the path memory follows only once the profile does.
    const moved = await followPath(services.facts, event, turn.path, nowIso(services));
    if (moved.withdrawn + moved.restored > 0)
      log.log(
        `Memory: ${label} is on another branch: withdrew what ${moved.withdrawn} turns had changed in the ` +
          `profile, applied again what ${moved.restored} turns back on its path had.`,
      );
  }

  // Independent: a failure of one never keeps the other from being done (and skipped on the redelivery). The
  // profile part waits for the summary only to keep it in the turn's record, as a new branch's starting point.
  const summaryRun = updateSummary(services, event, turn, model, log, { stored, follows });
  const [summary, profile] = await Promise.allSettled([
    summaryRun,
    consolidateProfile(services, event, turn, model, log, {
      onPath: !replayed || onFollowedPath(stored.summary, turn.path.firstOrdinal),
      summaryAfter: summaryRun.then(
        (result) => result.after,
        () => undefined,
      ),
    }),
  ]);

  // The conversation's tombstone, read once, after the writes: a delete that began before this read finds it here
  // and forgets what was written; one that begins after forgets it itself.
  if ((await services.sessions.find(userId, sessionId)) === undefined) {
    // Deleted before or while this ran: forgetting the conversation may have passed before these writes landed.
    const removed = await forgetConversation(services, userId, sessionId);
    log.log(
      `Memory: ${label}: the conversation was deleted meanwhile; its memory was removed again ` +
        `(${removed.factsDeleted} facts, ${removed.consolidations} records, summary ${removed.summary ? 'removed' : 'absent'}).`,
    );
    return { status: 'skipped', reason: 'conversation-deleted' };
  }
  if (summary.status === 'rejected') {
    if (profile.status === 'rejected')
      log.warn(`Memory: ${label}: the profile failed too. ${ensureError(profile.reason).message}`);
    throw summary.reason;
  }
  if (profile.status === 'rejected') throw profile.reason;
  return { status: 'consolidated', summary: summary.value.outcome, profile: profile.value };
}

/** The turn's user text, answer and source; a completed turn without them breaks the contract. */
function readTurn(event: MessageCompleted, label: string): Turn {
  const users = event.messages.filter((message) => message.role === 'user');
  const answer = event.messages.findLast((message) => message.role === 'assistant');
  const first = users[0];
  if (first === undefined || answer === undefined)
    throw new ValidationError(
      `Invalid message-completed event: ${label} is completed but does not carry the user's message and the ` +
        'answer.',
    );
  const at = new Date(first.timestamp);
  const branch = event.messages.find((message) => message.branch !== undefined)?.branch;
  return {
    label,
    userText: users.map((message) => message.content).join('\n\n'),
    answer: answer.content,
    source: {
      sessionId: event.sessionId,
      chatMessageId: event.chatMessageId,
      messageId: first.messageId,
      at: Number.isNaN(at.getTime()) ? event.completedAt : at.toISOString(),
      ordinal: first.ordinal,
    },
    lastOrdinal: Math.max(...event.messages.map((message) => message.ordinal)),
    completedAt: event.completedAt,
    path: {
      parent: branch?.parentChatMessageId,
      gaps: branch?.gaps ?? [],
      firstOrdinal: Math.min(...event.messages.map((message) => message.ordinal)),
    },
    scope: event.memoryScope ?? USER_SCOPE,
  };
}

/**
 * Runs a model call under the retry policy: its answer, or undefined when the turn is to be left out of that part
 * (the model refused for good, or failed on MODEL_DELIVERIES deliveries); otherwise the error escapes so the event
 * is delivered again.
 */
type ModelCall = <T>(part: string, call: () => Promise<T>) => Promise<T | undefined>;

function modelPolicy(label: string, delivery: Delivery, log: Log): ModelCall {
  return async (part, call) => {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof LlmError)) throw error;
      if (error.retryable && delivery.deliveryCount < MODEL_DELIVERIES) throw error;
      const when = error.retryable ? `after ${delivery.deliveryCount} deliveries` : 'for good';
      const why =
        error instanceof SpendRefusedError ? "its user's spend is used up" : `the model failed ${when}`;
      log.warn(`Memory: ${label} is left out of ${part}: ${why}. ${error.message}`);
      return undefined;
    }
  };
}

/**
 * The conversation's summary with this turn in it: skipped when it already covers the turn (a redelivery, or an
 * older turn replayed late); else one model call and one embedding, written on the version read. It goes on from the
 * stored summary when memory follows the turn's path, else from the one kept after the newest consolidated turn of
 * the path (summaryBase), and names the turn and its path. A concurrent write makes it start over from a fresh read.
 */
async function updateSummary(
  services: MemoryWorkerServices,
  event: MessageCompleted,
  turn: Turn,
  model: ModelCall,
  log: Log,
  first: { stored: StoredSummary | undefined; follows: boolean },
): Promise<SummaryResult> {
  const { userId, sessionId } = event;
  for (let attempt = 1; attempt <= SUMMARY_ATTEMPTS; attempt++) {
    const stored = attempt === 1 ? first.stored : await services.summaries.get(userId, sessionId);
    if (stored !== undefined && stored.summary.coveredThrough >= turn.lastOrdinal)
      return {
        outcome: 'already-covered',
        ...(stored.summary.chatMessageId === event.chatMessageId
          ? { after: snapshotOf(stored.summary) }
          : {}),
      };
    const follows =
      attempt === 1 ? first.follows : followsPath(stored?.summary, event.chatMessageId, turn.path);
    const previous = follows
      ? stored && snapshotOf(stored.summary)
      : await startingSummary(services, event, turn, stored?.summary, log);
    const content = await model('the summary', () =>
      summariseConversation(services.llm, {
        previous,
        userText: turn.userText,
        answer: turn.answer,
      }),
    );
    // Left out: the summary after this turn is the one before it, on its path.
    if (content === undefined) return { outcome: 'left-out', ...(previous ? { after: previous } : {}) };
    const vectors = await model('the summary', () => services.llm.embed([content.summary]));
    if (vectors === undefined) return { outcome: 'left-out', ...(previous ? { after: previous } : {}) };
    const [vector] = vectors;
    if (vector === undefined) throw new Error(`No embedding came back for the summary of ${turn.label}.`);
    const now = nowIso(services);
    const exchanges = (previous?.exchanges ?? 0) + 1;
    const document: ConversationSummaryDocument = {
      id: sessionId,
      kind: 'conversation-summary',
      userId,
      sessionId,
      ...scopeField(turn.scope),
      ...content,
      // The conversation's date, as search shows it: when its latest summarised turn ended.
      timestamp: turn.completedAt,
      vector_embedding: vector,
      coveredThrough: turn.lastOrdinal,
      exchanges,
      createdAt: stored?.summary.createdAt ?? now,
      chatMessageId: event.chatMessageId,
      ...(turn.path.gaps.length === 0 ? {} : { gaps: [...turn.path.gaps] }),
    };
    if ((await services.summaries.put(document, stored?.version)) === 'written')
      return { outcome: 'written', after: { ...content, exchanges } };
  }
  throw new Error(
    `The summary of session ${sessionId} changed under ${SUMMARY_ATTEMPTS} writes in a row; the event will be ` +
      'delivered again.',
  );
}

/** The summary a turn on a newly followed path goes on from (summaryBase), saying when it is unsure. */
async function startingSummary(
  services: MemoryWorkerServices,
  event: MessageCompleted,
  turn: Turn,
  stored: ConversationSummaryDocument | undefined,
  log: Log,
): Promise<SummarySnapshot | undefined> {
  const { base, unsure } = await summaryBase(services.facts, event, turn.path, stored);
  if (unsure)
    log.warn(
      `Memory: ${turn.label} is on another branch, and no summary was kept for the turns before it (they were ` +
        "consolidated before branches existed): the conversation's summary goes on as it was, which may still " +
        'mention the turns its path left.',
    );
  return base;
}

/**
 * The turn's profile changes: decided once (one model call over the user's words and the active facts, then the
 * merge's guards) and recorded before anything is applied, so a redelivery applies the recorded changes, never new
 * ones; each change is applied idempotently; the record is marked applied last, with the summary after the turn. A
 * turn the model gives no changes for still gets its record (without changes): it keeps the summary after it for a
 * branch that starts there. An older turn replayed late that is not on the path memory follows changes nothing.
 */
async function consolidateProfile(
  services: MemoryWorkerServices,
  event: MessageCompleted,
  turn: Turn,
  model: ModelCall,
  log: Log,
  options: { onPath: boolean; summaryAfter: Promise<SummarySnapshot | undefined> },
): Promise<ProfileOutcome> {
  const { userId, sessionId, chatMessageId } = event;
  const start = await services.facts.consolidationStart(userId, sessionId, chatMessageId);
  let record = start.record;
  if (record?.appliedAt !== undefined || record?.withdrawnAt !== undefined) {
    // Applied by a run whose summary failed: the summary after the turn is kept now that there is one.
    if (
      record.appliedAt !== undefined &&
      record.withdrawnAt === undefined &&
      record.summaryAfter === undefined
    ) {
      const after = await options.summaryAfter;
      if (after) await services.facts.markApplied(userId, record.id, record.appliedAt, after);
    }
    return 'already-applied';
  }
  let outcome: ProfileOutcome = 'applied';
  if (record === undefined) {
    if (!options.onPath) {
      log.log(`Memory: ${turn.label} is left out of the profile: its branch is not the one the user kept.`);
      return 'left-out';
    }
    // The turn decides against the facts of the scope it writes to only: a project's conversation neither restates
    // nor replaces what the user's shared memory (or another project's) holds.
    const active = start.active.filter((fact) => inScopes(fact, [turn.scope]));
    const proposed = await model('the profile', () =>
      proposeProfileChanges(services.llm, { userText: turn.userText, activeFacts: active }),
    );
    if (proposed === undefined) outcome = 'left-out';
    const merged =
      proposed === undefined
        ? { changes: [], dropped: [] }
        : mergeProfileChanges({
            active,
            userText: turn.userText,
            proposed,
            newFactId: (n) => newFactId(sessionId, chatMessageId, n),
          });
    reportDropped(merged.dropped, turn.label, log);
    const decided: ConsolidationRecord = {
      id: consolidationId(sessionId, chatMessageId),
      kind: 'consolidation',
      userId,
      sessionId,
      chatMessageId,
      ...scopeField(turn.scope),
      source: turn.source,
      changes: merged.changes,
      createdAt: nowIso(services),
    };
    // A concurrent run may have recorded its own decision first: the stored one wins. A decision without changes
    // has nothing to apply: it is recorded applied, with the summary after the turn, in one write instead of two.
    if (merged.changes.length > 0) record = await services.facts.createConsolidation(decided);
    else {
      const after = await options.summaryAfter;
      record = await services.facts.createConsolidation({
        ...decided,
        appliedAt: nowIso(services),
        ...(after ? { summaryAfter: after } : {}),
      });
      if (record.appliedAt !== undefined && record.withdrawnAt === undefined && record.changes.length === 0)
        return outcome;
    }
  }
  await applyRecord(services.facts, record);
  await services.facts.markApplied(userId, record.id, nowIso(services), await options.summaryAfter);
  return outcome;
}

function reportDropped(dropped: readonly DroppedChange[], label: string, log: Log): void {
  if (dropped.length === 0) return;
  const list = dropped.map((d) => `${d.kind} "${d.subject}" (${d.reason})`).join('; ');
  const message = `Memory: ${label}: left out ${dropped.length} proposed profile changes: ${list}.`;
  // A full profile is worth a warning; the other guards are the merge doing its job.
  if (dropped.some((d) => d.reason === 'profile-full')) log.warn(message);
  else log.log(message);
}

function nowIso(services: Pick<MemoryWorkerServices, 'now'>): string {
  return (services.now?.() ?? new Date()).toISOString();
}
