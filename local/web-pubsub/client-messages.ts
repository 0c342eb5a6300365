// The frames of the JSON subprotocols (`json.webpubsub.azure.v1`, `json.reliable.webpubsub.azure.v1`): zod
// schemas for what a client may send, and builders for what the service sends back.
import { z } from 'zod';
import { toWireData, type Payload } from './payload.js';

export const JSON_SUBPROTOCOL = 'json.webpubsub.azure.v1';
export const RELIABLE_JSON_SUBPROTOCOL = 'json.reliable.webpubsub.azure.v1';

/** Group names are 1–1024 characters, as the REST API documents them. */
const groupName = z.string().min(1).max(1024);
const ackId = z.number().int().nonnegative().optional();
const sequenceId = z.union([
  z.number().int().nonnegative(),
  z
    .string()
    .regex(/^\d+$/)
    .transform((value) => Number(value)),
]);

// The payload fields of sendToGroup and event frames are not read: those requests are refused whatever they carry
// (the app's clients never send; the local service has no upstream).
const clientFrame = z.discriminatedUnion('type', [
  z.object({ type: z.literal('joinGroup'), group: groupName, ackId }),
  z.object({ type: z.literal('leaveGroup'), group: groupName, ackId }),
  z.object({ type: z.literal('sendToGroup'), group: groupName, ackId }),
  z.object({ type: z.literal('event'), event: z.string().min(1), ackId }),
  z.object({ type: z.literal('sequenceAck'), sequenceId }),
  z.object({ type: z.literal('ping') }),
  z.object({ type: z.literal('invoke'), invocationId: z.string().min(1), event: z.string().optional() }),
  z.object({ type: z.literal('cancelInvocation'), invocationId: z.string().min(1) }),
]);
type ClientFrame = z.infer<typeof clientFrame>;

export function parseClientFrame(
  text: string,
): { ok: true; frame: ClientFrame } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'The frame is not valid JSON.' };
  }
  const result = clientFrame.safeParse(value);
  if (result.success) return { ok: true, frame: result.data };
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at '${issue.path.join('.')}'` : '';
  return { ok: false, reason: `Unsupported or malformed frame${where}: ${issue?.message ?? 'invalid'}.` };
}

/** A server message (sendToUser) to a connection; the reliable subprotocol numbers it. */
export function serverMessageFrame(payload: Payload, sequenceId?: number): string {
  const sequence = sequenceId === undefined ? {} : { sequenceId };
  return JSON.stringify({ ...sequence, type: 'message', from: 'server', ...toWireData(payload) });
}

/** A message sent to a group the connection is in (by REST, so no `fromUserId`); the reliable subprotocol numbers it. */
export function groupMessageFrame(group: string, payload: Payload, sequenceId?: number): string {
  const sequence = sequenceId === undefined ? {} : { sequenceId };
  return JSON.stringify({ ...sequence, type: 'message', from: 'group', group, ...toWireData(payload) });
}

export function connectedFrame(
  connectionId: string,
  userId: string | undefined,
  reconnectionToken?: string,
): string {
  return JSON.stringify({
    type: 'system',
    event: 'connected',
    ...(userId === undefined ? {} : { userId }),
    connectionId,
    ...(reconnectionToken === undefined ? {} : { reconnectionToken }),
  });
}

export function disconnectedFrame(message: string): string {
  return JSON.stringify({ type: 'system', event: 'disconnected', message });
}

type AckErrorName = 'Forbidden' | 'InternalServerError';

export function ackFrame(ackId: number): string {
  return JSON.stringify({ type: 'ack', ackId, success: true });
}

export function ackErrorFrame(ackId: number, name: AckErrorName, message: string): string {
  return JSON.stringify({ type: 'ack', ackId, success: false, error: { name, message } });
}

export function pongFrame(): string {
  return JSON.stringify({ type: 'pong' });
}

export function invokeErrorFrame(invocationId: string, name: string, message: string): string {
  return JSON.stringify({ type: 'invokeResponse', invocationId, success: false, error: { name, message } });
}
