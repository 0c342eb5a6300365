// POST /api/ui/chat and GET /api/ui/chat/{id}/stream: a useChat app's turn, posted through the same front door as
// POST /api/chat (the chat id is the session, made on first use of an AI SDK id), answered as a UI message stream.
import { createHash, randomUUID } from 'node:crypto';
import { NotFoundError, QuotaExceededError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { isAiSdkId } from '../ids.js';
import type { PostedMessageStore } from '../conversation/posted-message-store.js';
import { isTerminalEvent } from '../streaming/contracts.js';
import type { OpenStreams } from '../streaming/open-streams.js';
import { storeMessageFiles } from '../attachments/message-files.js';
import { postChatMessage, type PostChatMessageServices } from './post-chat-message.js';
import { regenerateTurn } from './regenerate-turn.js';
import { answerApproval, type AnswerApprovalServices } from './approvals/answer-approval.js';
import type { UiChatTurn } from './ui-chat-request.js';
import { openUiTurnStream, type UiTurnStreamServices } from './ui-chat-stream.js';

export type UiChatServices = PostChatMessageServices &
  UiTurnStreamServices & {
    posted: Pick<PostedMessageStore, 'latest' | 'find'>;
    /** The streams open in this instance: a resume over the user's cap is refused (429). */
    openStreams: OpenStreams;
    /** Where addToolApprovalResponse's answers go (absent: such a re-post is refused). */
    approvals?: Pick<AnswerApprovalServices, 'turns' | 'orchestrations'>;
  };

/** How many of a session's newest posted messages a resume looks through for the one still running. */
const RESUME_LOOKBACK = 5;

/** Queues the turn the body asks for (a re-post is the same turn) and streams its answer from the start. */
export async function postUiChat(
  services: UiChatServices,
  caller: Caller,
  turn: UiChatTurn,
  onError: (error: unknown) => void,
): Promise<ReadableStream<Uint8Array>> {
  if (turn.kind === 'approve') return continueAfterApprovals(services, caller, turn, onError);
  const posted =
    turn.kind === 'regenerate'
      ? // A new alternative each time: a regenerate names no new id, and two presses ask for two answers.
        await regenerateTurn(services, caller, turn, randomUUID(), turn.model)
      : await postToSession(services, caller, turn);
  const { message } = posted;
  return openUiTurnStream(
    services,
    { userId: caller.userId, sessionId: message.sessionId, chatMessageId: message.chatMessageId },
    onError,
  );
}

/**
 * useChat's re-post after addToolApprovalResponse: each answer is given as POST .../approvals/{approvalId} gives it
 * (the owner's only, once: a second answer is 409), then the same message goes on from the first request answered.
 */
async function continueAfterApprovals(
  services: UiChatServices,
  caller: Caller,
  turn: Extract<UiChatTurn, { kind: 'approve' }>,
  onError: (error: unknown) => void,
): Promise<ReadableStream<Uint8Array>> {
  if (services.approvals === undefined) throw new NotFoundError('No approvals are answered here.');
  const approvals = { ...services.approvals, sessions: services.sessions, posted: services.posted };
  const ref = { sessionId: turn.sessionId, chatMessageId: turn.chatMessageId };
  for (const answer of turn.answers)
    await answerApproval(
      { ...approvals, events: services.turnEvents },
      caller,
      { ...ref, ...answer },
      answer,
    );
  const events = await services.turnEvents.read(turn.sessionId, turn.chatMessageId, 0);
  const answered = turn.answers.map((answer) => answer.approvalId);
  const requested = events.flatMap((event) =>
    event.type === 'tool-approval-request' && answered.includes(event.approvalId) ? [event.seq] : [],
  );
  return openUiTurnStream(services, { userId: caller.userId, ...ref }, onError, undefined, {
    afterSeq: Math.min(...requested),
    answered,
  });
}

/**
 * GET .../stream (useChat's resume): the session's running turn from its start, or 'idle' when none runs (also for
 * an AI SDK id no one has used yet: a new chat resumes before its first message). Another user's session is 404.
 */
export async function resumeUiChat(
  services: UiChatServices,
  caller: Caller,
  sessionId: string,
  onError: (error: unknown) => void,
): Promise<ReadableStream<Uint8Array> | 'idle'> {
  const session = await services.sessions.find(caller.userId, sessionId);
  if (session === undefined) {
    if (isAiSdkId(sessionId) && (await services.sessions.claimant(sessionId)) === undefined) return 'idle';
    throw sessionNotFound(sessionId);
  }
  const running = await runningTurn(services, caller.userId, sessionId);
  if (running === undefined) return 'idle';
  const turn = { userId: caller.userId, sessionId, chatMessageId: running };
  return openUiTurnStream(services, turn, onError, services.openStreams);
}

/**
 * The oldest of the session's newest turns that has not ended: turns of a session run in order, so it is the one
 * running (or next). A turn older than its events' lifetime with no end is not waited for.
 */
async function runningTurn(
  services: UiChatServices,
  userId: string,
  sessionId: string,
): Promise<string | undefined> {
  const newest = await services.posted.latest(userId, sessionId, RESUME_LOOKBACK);
  const ended = await Promise.all(
    newest.map(async (posted) => {
      const events = await services.turnEvents.read(sessionId, posted.chatMessageId, 0);
      return events.some(isTerminalEvent);
    }),
  );
  const now = services.now?.() ?? new Date();
  const open = newest.filter(
    (posted, index) => !ended[index] && now.getTime() - Date.parse(posted.postedAt) < TURN_EVENTS_LIFETIME_MS,
  );
  return open.at(-1)?.chatMessageId;
}

/** A turn's events live a day (the turn-events container's TTL): a turn posted longer ago is not resumed. */
const TURN_EVENTS_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * Posts the message to the caller's session with this id: their own, or, for an AI SDK id no one holds, a new one
 * claimed now (a UUID names a session POST /api/session/start made; the server's ids are never claimed). A first
 * message the quotas refuse takes the new session back, so a refused post leaves no empty conversation behind.
 */
async function postToSession(
  services: UiChatServices,
  caller: Caller,
  turn: Extract<UiChatTurn, { kind: 'send' }>,
) {
  const { sessions } = services;
  const own = await sessions.find(caller.userId, turn.sessionId);
  const session =
    own ?? (isAiSdkId(turn.sessionId) ? await sessions.claim(caller.userId, turn.sessionId) : undefined);
  if (session === undefined) throw sessionNotFound(turn.sessionId);
  // File parts are stored as uploads are, then named like uploads; a refused post takes them back.
  const files = turn.files ?? [];
  const { ids: sent, stored } =
    files.length === 0 || services.attachments === undefined
      ? { ids: [], stored: [] }
      : await storeMessageFiles(services.attachments, caller, files, session.sessionId);
  // A part naming a stored file (uploaded directly, or read back from history) is attached as it is.
  const attachments = [...(turn.attachmentIds ?? []), ...sent];
  try {
    return await postChatMessage(services, caller, {
      ...(attachments.length > 0 ? { attachments } : {}),
      sessionId: session.sessionId,
      chatMessageId: turn.inPlace ? editedTurnId(turn.sessionId, turn.messageId, turn.text) : turn.messageId,
      text: turn.text,
      useMemory: turn.useMemory,
      ...(turn.memory === undefined ? {} : { memory: turn.memory }),
      ...(turn.model === undefined ? {} : { model: turn.model }),
      ...(turn.editOf === undefined ? {} : { editOf: turn.editOf }),
    });
  } catch (error) {
    if (stored.length > 0) await services.attachments?.store.delete(caller.userId, stored);
    // Only a session this post made, and only while nothing was posted to it (a racing post of the same user may
    // have been admitted meanwhile).
    if (
      own === undefined &&
      error instanceof QuotaExceededError &&
      (await services.posted.latest(caller.userId, session.sessionId, 1)).length === 0
    )
      await sessions.release(caller.userId, session.sessionId);
    throw error;
  }
}

function sessionNotFound(sessionId: string): NotFoundError {
  return new NotFoundError(
    `No session '${sessionId}' for this user: a useChat chat id of 16 letters and digits starts a session on its first message; a UUID must come from POST /api/session/start.`,
  );
}

/**
 * useChat edits a message in place, keeping its id: the edit's own turn id is a UUID derived from the session, that
 * id and the new text, so posting the same edit again is the same turn.
 */
export function editedTurnId(sessionId: string, messageId: string, text: string): string {
  const hex = createHash('sha256')
    .update(`ui-chat-edit\n${sessionId}\n${messageId}\n${text}`, 'utf8')
    .digest('hex');
  // RFC 9562 version 8 (custom) with the RFC's variant bits.
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
