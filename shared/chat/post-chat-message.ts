// The front door of a chat turn: records the message as accepted in the caller's own session with a ticket to the
// turn's stream (one request, which reads the session too), then queues it on `user-messages`. Idempotent per
// session; an edit (`editOf`) replaces an earlier committed message.
import { createHash } from 'node:crypto';
import { ConflictError, NotFoundError, NotReadyError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import type { MessagePublisher } from '../messaging/message-publisher.js';
import {
  admitTurn,
  leasesTurns,
  limitsTurns,
  type QuotaServices,
  type TurnAdmission,
} from '../quota/quota-gate.js';
import { newStreamTicket, type IssuedStreamTicket } from '../streaming/stream-tickets.js';
import { parseInput } from '../validation.js';
import type { FoundTurn } from '../conversation/active-path.js';
import { MAX_PATH_GAPS, type TurnFork } from '../conversation/branches.js';
import {
  groupsFlag,
  memoryFlag,
  shapeFlags,
  parkFlag,
  temporaryFlag,
  queuedChatMessageSchema,
  queuedMessageId,
  USER_MESSAGES_QUEUE,
  type QueuedChatMessage,
} from './contracts/queue.js';
import type { ChatRequest } from './contracts/http.js';
import type { SessionStore } from '../conversation/session-store.js';
import type { PostedMessage, PostedMessageStore } from '../conversation/posted-message-store.js';
import { requireSession } from '../conversation/require-session.js';
import type { WorkingMemoryStore } from '../conversation/working-memory-store.js';
import { attachToMessage, type ModelVision } from '../attachments/attach-to-message.js';
import type { AttachmentServices } from '../attachments/store-attachment.js';
import type { MessageAttachment } from '../message-attachments.js';
import { conversationMemoryMode } from '../conversation/conversation-shape.js';
import { memoryFields, narrowerMemoryMode, type MemoryMode } from '../conversation/memory-mode.js';
import type { ChatSession } from '../conversation/session-store.js';
import { chooseModel, type ModelCatalogue } from '../models/model-catalogue.js';
import type { ChatMessage, ToolSpec } from '../llm/llm-gateway.js';

export interface PostChatMessageServices {
  sessions: SessionStore;
  posted: Pick<PostedMessageStore, 'claim' | 'find'>;
  publisher: MessagePublisher;
  /** Where an edit or a regenerate finds the turn it replaces (read only for those). */
  workingMemory: Pick<WorkingMemoryStore, 'findTurn'>;
  /** How long the stream ticket of the answer opens its stream. */
  ticketTtlSeconds: number;
  /** The caller's quotas: a new message is admitted by them or refused (429) before anything is recorded. */
  quota?: QuotaServices;
  /** Where the attachments a message names are found (absent: a message carries none). */
  attachments?: AttachmentServices;
  /** The models a turn may name; absent: turns run on the connection's model. */
  models?: ModelCatalogue;
  now?: () => Date;
}

/** A message to queue, as the front door decided it. */
export interface TurnToPost {
  sessionId: string;
  chatMessageId: string;
  text: string;
  useMemory: boolean;
  /** The memory mode asked for (over useMemory); absent: the conversation's, or off when useMemory is false. */
  memory?: MemoryMode | undefined;
  /** The model asked for; absent: the conversation's. */
  model?: string | undefined;
  fork?: TurnFork;
  attachments?: MessageAttachment[];
  /** The messages the model reads before this one, as an OpenAI-compatible client gave them. */
  context?: ChatMessage[];
  /** What followed this one in that context (client tool calls and results), and the client's own tools. */
  followUp?: ChatMessage[];
  clientTools?: ToolSpec[];
  /**
   * What else a re-post must repeat to be the same message (an OpenAI-compatible request's messages, tools and
   * model): hashed with the text, so the same id with another request is a 409, not the first request's answer.
   */
  fingerprint?: string;
}

export interface PostedChatMessage {
  /** The message as queued: for a re-post, the first post's (same postedAt). */
  message: QueuedChatMessage;
  /** Opens the turn's stream without headers; a fresh one on every post. */
  ticket: IssuedStreamTicket;
}

/** Resolves once the message is on the queue. Nothing is queued when any check fails. */
export async function postChatMessage(
  services: PostChatMessageServices,
  caller: Caller,
  request: ChatRequest,
): Promise<PostedChatMessage> {
  const fork: TurnFork | undefined =
    request.editOf === undefined ? undefined : { replaces: request.editOf, origin: 'edit' };
  // A new message's session is read with its record (one request); an edit reads its target's first.
  if (fork !== undefined) {
    await requireSession(services.sessions, caller, request.sessionId);
    await requireReplaceable(services, caller, request.sessionId, fork.replaces);
  }
  const attachments = await attachmentsOf(
    services,
    caller,
    request.sessionId,
    request.attachments,
    request.model,
  );
  return postTurn(services, caller, {
    sessionId: request.sessionId,
    chatMessageId: request.chatMessageId,
    text: request.text,
    useMemory: request.useMemory,
    memory: request.memory,
    model: request.model,
    ...(fork ? { fork } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
  });
}

/** The attachments a message names, checked (the caller's, within a message's limits) and tied to its session. */
export async function attachmentsOf(
  services: Pick<PostChatMessageServices, 'attachments' | 'models' | 'sessions'>,
  caller: Caller,
  sessionId: string,
  ids: readonly string[] | undefined,
  model?: string,
): Promise<MessageAttachment[]> {
  if (ids === undefined || ids.length === 0) return [];
  if (services.attachments === undefined) throw new NotFoundError('This app keeps no attachments.');
  const catalogue = services.models;
  // Only a message with an image, under a listed catalogue, reads the conversation's model (when it names none).
  const vision: ModelVision | undefined =
    catalogue?.listed === true
      ? async () => {
          const id =
            model ??
            (await services.sessions.find(caller.userId, sessionId))?.model ??
            catalogue.defaultModel;
          const entry = catalogue.models.find((candidate) => candidate.id === id);
          return { model: id, sees: entry?.capabilities.vision === true };
        }
      : undefined;
  return attachToMessage(services.attachments, caller.userId, sessionId, ids, vision);
}

/**
 * Records the message as accepted in the caller's session (read with the record), with a ticket, and queues it. A
 * re-post is the same message only with the same text and the same fork.
 */
export async function postTurn(
  services: PostChatMessageServices,
  caller: Caller,
  turn: TurnToPost,
): Promise<PostedChatMessage> {
  // A model the caller may not use is refused before anything is recorded.
  if (turn.model !== undefined && services.models !== undefined)
    chooseModel(services.models, caller, turn.model);
  const admission = await admitNewTurn(services, caller, turn);
  try {
    return await recordAndQueue(services, caller, turn, admission.holdsSlot);
  } catch (error) {
    // A post that fails (a 409, a conversation deleted meanwhile, a broker down) holds no slot and counts no message.
    await admission.undo();
    throw error;
  }
}

/**
 * The caller's quotas admit a message not yet accepted in the session; a re-post of an accepted one (the same id)
 * is never refused nor counted again, whatever the limits say now.
 */
async function admitNewTurn(
  services: PostChatMessageServices,
  caller: Caller,
  turn: TurnToPost,
): Promise<TurnAdmission> {
  const quota = services.quota;
  if (quota === undefined || !limitsTurns(quota.config, caller))
    return { holdsSlot: false, undo: () => Promise.resolve() };
  const accepted = await services.posted.find(caller.userId, turn.sessionId, turn.chatMessageId);
  // The first post took the lease, if a limit was on: the re-post's message names it the same way.
  if (accepted !== undefined) return { holdsSlot: leasesTurns(quota.config), undo: () => Promise.resolve() };
  return admitTurn(quota, caller, turn);
}

async function recordAndQueue(
  services: PostChatMessageServices,
  caller: Caller,
  turn: TurnToPost,
  holdsSlot: boolean,
): Promise<PostedChatMessage> {
  const now = services.now?.() ?? new Date();
  const textSha256 = createHash('sha256')
    .update(turn.fingerprint === undefined ? turn.text : `${turn.text}\u0000${turn.fingerprint}`, 'utf8')
    .digest('hex');
  const ticket = newStreamTicket(caller.userId, { ttlSeconds: services.ticketTtlSeconds, now });
  // One request: the session's read, the record and the ticket's hash, in the session's partition.
  const claim = await services.posted.claim(
    {
      userId: caller.userId,
      sessionId: turn.sessionId,
      chatMessageId: turn.chatMessageId,
      textSha256,
      postedAt: now.toISOString(),
      ...(turn.fork ? { fork: turn.fork } : {}),
      ...memoryFlag(turn),
    },
    { sha256: ticket.sha256, expiresAt: ticket.expiresAt },
  );
  // Nothing of the message is kept then (the store took back what it wrote).
  if (claim.kind !== 'recorded')
    throw new NotFoundError(
      claim.kind === 'session-deleted'
        ? `No session '${turn.sessionId}' for this user: its conversation was deleted.`
        : `No session '${turn.sessionId}' for this user: start one with POST /api/session/start.`,
    );
  const accepted = claim.posted;
  const shaped = turnShape(services, caller, turn, claim.session);
  if (accepted.textSha256 !== textSha256 || !sameFork(accepted.fork, turn.fork))
    throw new ConflictError(
      `chatMessageId '${turn.chatMessageId}' was already posted in this session with a different ${accepted.textSha256 !== textSha256 ? 'text' : 'edit or regenerate target'}: ` +
        'send a new message with a new chatMessageId (re-posting the same message with the same id is safe).',
    );
  const message = parseInput(
    queuedChatMessageSchema,
    {
      userId: caller.userId,
      sessionId: turn.sessionId,
      chatMessageId: turn.chatMessageId,
      text: turn.text,
      postedAt: accepted.postedAt,
      // Only when off or read: absent means readwrite, so a usual message keeps the shape it always had.
      ...memoryFields(shaped.memory),
      ...(shaped.model !== undefined ? { model: shaped.model } : {}),
      ...(claim.session === undefined
        ? {}
        : { ...shapeFlags(claim.session), ...temporaryFlag(claim.session) }),
      ...parkFlag(claim.session),
      ...(turn.fork ? { fork: turn.fork } : {}),
      ...(holdsSlot ? { quotaSlot: true } : {}),
      ...(turn.attachments ? { attachments: turn.attachments } : {}),
      ...(turn.context ? { context: turn.context } : {}),
      ...(turn.followUp ? { followUp: turn.followUp } : {}),
      ...(turn.clientTools ? { clientTools: turn.clientTools } : {}),
      ...groupsFlag(caller),
    } satisfies QueuedChatMessage,
    'queued chat message',
  );
  // No tombstone read after the send: a delete that marks the session from here on purges the records, and the
  // queued message then finds no session in the worker and starts nothing.
  await services.publisher.publish(USER_MESSAGES_QUEUE, {
    body: message,
    messageId: queuedMessageId(message.sessionId, message.chatMessageId),
    sessionId: message.sessionId,
    subject: 'chat-message',
  });
  return { message, ticket: { ticket: ticket.ticket, expiresAt: ticket.expiresAt } };
}

/**
 * The committed turn an edit or a regenerate replaces, and what the front door recorded of it. A message never
 * posted in the session (or another user's) → 404; one posted but not answered yet, or answered so recently that
 * neither working memory nor history can show it → 409 with a retry hint: replacing a turn needs its place.
 */
export async function requireReplaceable(
  services: Pick<PostChatMessageServices, 'workingMemory' | 'posted'>,
  caller: Caller,
  sessionId: string,
  chatMessageId: string,
): Promise<{ turn: FoundTurn; posted: PostedMessage | undefined }> {
  const [turn, posted] = await Promise.all([
    services.workingMemory.findTurn(caller.userId, sessionId, chatMessageId),
    services.posted.find(caller.userId, sessionId, chatMessageId),
  ]);
  if (turn !== undefined) {
    // The new branch keeps the gaps of the replaced turn's parent and adds one: refused now rather than failing
    // the turn later (a gap ending at the replaced turn's own first ordinal lies beyond its parent).
    const parentGaps = turn.branch.gaps.filter((gap) => gap.to !== turn.firstOrdinal).length;
    if (parentGaps >= MAX_PATH_GAPS)
      throw new ConflictError(
        `This conversation's path already branches ${MAX_PATH_GAPS} times before that message: continue it, or start a new conversation.`,
      );
    return { turn, posted };
  }
  if (posted === undefined)
    throw new NotFoundError(`No message '${chatMessageId}' in session '${sessionId}' for this user.`);
  throw new NotReadyError(
    `Message '${chatMessageId}' is still being answered: replace it once its answer has ended (message-end or error).`,
    2,
  );
}

/**
 * The turn's memory mode and model: the message's own choice within what its conversation allows (a temporary or
 * memory-off conversation stays off), else the conversation's. A model the session names that the catalogue no
 * longer lists falls back to the default.
 */
function turnShape(
  services: PostChatMessageServices,
  caller: Caller,
  turn: TurnToPost,
  session: ChatSession | undefined,
): { memory: MemoryMode; model: string | undefined } {
  const allowed = session === undefined ? 'readwrite' : conversationMemoryMode(session);
  const asked = turn.memory ?? (turn.useMemory ? allowed : 'off');
  const memory = narrowerMemoryMode(asked, allowed);
  const catalogue = services.models;
  if (catalogue === undefined) return { memory, model: turn.model };
  const kept = session?.model;
  const listed = kept !== undefined && catalogue.models.some((entry) => entry.id === kept);
  return { memory, model: chooseModel(catalogue, caller, turn.model, listed ? kept : undefined) };
}

function sameFork(a: TurnFork | undefined, b: TurnFork | undefined): boolean {
  return a?.replaces === b?.replaces && a?.origin === b?.origin;
}
