// Answering a tool call that waits for its user's yes (POST /api/chat/{sessionId}/{chatMessageId}/approvals/
// {approvalId}): the turn's owner only, once; the answer is recorded, then raised to the turn's orchestration.
import { ConflictError, NotFoundError } from '../../errors.js';
import type { Caller } from '../../identity/caller.js';
import type { PostedMessageStore } from '../../conversation/posted-message-store.js';
import type { SessionStore } from '../../conversation/session-store.js';
import { turnInstanceId } from '../../conversation/turn-ids.js';
import type { OrchestrationClient } from '../../durable/orchestration-client.js';
import type { TurnRef } from '../../conversation/messages.js';
import type { UserToolSource } from '../../mcp/turn-tools.js';
import { pendingApprovals } from '../../streaming/pending-approvals.js';
import type { TurnEventStore } from '../../streaming/turn-event-store.js';
import { approvalEventName, type ApprovalAnswer } from '../contracts/activities.js';
import type { TurnStateStore } from '../turn-state-store.js';

export interface AnswerApprovalServices {
  sessions: Pick<SessionStore, 'find'>;
  posted: Pick<PostedMessageStore, 'find'>;
  /** The turn's events: its approval request, and whether the call already has its result. */
  events: Pick<TurnEventStore, 'read'>;
  /** Where the answer is recorded, created once: a second answer finds it there. */
  turns: Pick<TurnStateStore, 'recordApprovalAnswer'>;
  orchestrations: Pick<OrchestrationClient, 'raiseEvent'>;
  /** Where "always allow this tool" is remembered (absent: `always` is ignored). */
  userTools?: Pick<UserToolSource, 'alwaysAllow'> | undefined;
  now?: () => Date;
}

export interface ApprovalRef {
  sessionId: string;
  chatMessageId: string;
  approvalId: string;
}

export async function answerApproval(
  services: AnswerApprovalServices,
  caller: Caller,
  ref: ApprovalRef,
  answer: ApprovalAnswer,
): Promise<void> {
  const { sessionId, chatMessageId, approvalId } = ref;
  const [session, posted, events] = await Promise.all([
    services.sessions.find(caller.userId, sessionId),
    services.posted.find(caller.userId, sessionId, chatMessageId),
    services.events.read(sessionId, chatMessageId, 0),
  ]);
  // Nothing of another user's turn is told: an unknown turn and someone else's look the same.
  if (session === undefined || posted === undefined)
    throw new NotFoundError(`No turn '${chatMessageId}' in a session '${sessionId}' of this user.`);
  const request = events.find(
    (event) => event.type === 'tool-approval-request' && event.approvalId === approvalId,
  );
  if (request?.type !== 'tool-approval-request')
    throw new NotFoundError(`Turn '${chatMessageId}' asked for no approval '${approvalId}'.`);
  if (!pendingApprovals(events).includes(request))
    throw new ConflictError(`Approval '${approvalId}' was already answered (or timed out).`);
  const first = await give(services, { userId: caller.userId, sessionId, chatMessageId }, approvalId, answer);
  if (!first) throw new ConflictError(`Approval '${approvalId}' was already answered.`);
  if (answer.approved && answer.always === true)
    await services.userTools?.alwaysAllow(request.toolName, caller);
}

/**
 * The session's next message was posted while the turn waited for its user's yes: each approval still waiting is
 * denied ("the user moved on"), so the turn ends before the new message is answered. An approval answered meanwhile
 * keeps its answer.
 */
export async function denyPendingApprovals(
  services: Pick<AnswerApprovalServices, 'events' | 'turns' | 'orchestrations' | 'now'>,
  turn: TurnRef,
  reason: string,
): Promise<number> {
  const events = await services.events.read(turn.sessionId, turn.chatMessageId, 0);
  let denied = 0;
  for (const request of pendingApprovals(events))
    if (await give(services, turn, request.approvalId, { approved: false, reason })) denied++;
  return denied;
}

/** Records the answer once, then raises it to the turn's orchestration; false when it had an answer already. */
async function give(
  services: Pick<AnswerApprovalServices, 'turns' | 'orchestrations' | 'now'>,
  turn: TurnRef,
  approvalId: string,
  answer: ApprovalAnswer,
): Promise<boolean> {
  const first = await services.turns.recordApprovalAnswer(turn, approvalId, {
    approved: answer.approved,
    answeredAt: (services.now?.() ?? new Date()).toISOString(),
  });
  if (first)
    await services.orchestrations.raiseEvent(
      turnInstanceId(turn.sessionId, turn.chatMessageId),
      approvalEventName(approvalId),
      answer,
    );
  return first;
}
