// A turn's approval requests still waiting for their user's answer, read from its events: the request's call has
// no result yet and the turn has not ended.
import { isTerminalEvent, type ChatEvent } from './contracts.js';

export type ApprovalRequestEvent = Extract<ChatEvent, { type: 'tool-approval-request' }>;

export function pendingApprovals(events: readonly ChatEvent[]): ApprovalRequestEvent[] {
  if (events.some(isTerminalEvent)) return [];
  const answered = new Set(
    events.flatMap((event) => (event.type === 'tool-result' ? [event.toolCallId] : [])),
  );
  return events.filter(
    (event): event is ApprovalRequestEvent =>
      event.type === 'tool-approval-request' && !answered.has(event.toolCallId),
  );
}
