// The owner's answer to a tool call that waits for their yes: posted to the turn's approvals, after which the turn's
// live stream goes on (the tool's result, then the rest of the answer) in the same message.
import type { ApiClient } from '../api/client';
import { turnOf, type ChatUIMessage } from './messages';
import type { SessionHolder } from './session-holder';

export interface ApprovalAnswer {
  approved: boolean;
  reason?: string;
  /** "Always allow this tool": its later calls run without asking. */
  always?: boolean;
}

export type AnswerApproval = (
  message: ChatUIMessage,
  approvalId: string,
  answer: ApprovalAnswer,
) => Promise<void>;

export function approvalsOf(api: ApiClient, session: Pick<SessionHolder, 'current'>): AnswerApproval {
  return async (message, approvalId, answer) => {
    const sessionId = session.current();
    if (sessionId === undefined) throw new Error('This conversation has no session yet.');
    const turn = encodeURIComponent(turnOf(message));
    const path = `/api/chat/${encodeURIComponent(sessionId)}/${turn}/approvals/${encodeURIComponent(approvalId)}`;
    await api.json('POST', path, answer);
  };
}
