// A sender's message as the local Service Bus takes it: checked as Service Bus and its SDK would (ids, sessions),
// its body encoded as @azure/service-bus encodes a non-binary body, and sends accepted in order under latency.
import { setTimeout as sleep } from 'node:timers/promises';
import { DependencyError } from '../../shared/errors.js';
import type { OutgoingMessage } from '../../shared/messaging/message-publisher.js';
import type { StoredMessage } from './delivery-queue.js';

/** Service Bus limit on message and session ids. */
const MAX_ID_LENGTH = 128;
const CONTENT_TYPE = 'application/json';

/** The queue or topic a message is sent to, as far as the checks need it. */
type SendTarget =
  { kind: 'queue'; name: string; store: { requiresSession: boolean } } | { kind: 'topic'; name: string };

export type PreparedMessage = Omit<StoredMessage, 'sequenceNumber' | 'enqueuedTimeUtc' | 'deliveryCount'>;

/** Checks a message as Service Bus and its SDK would, and turns it into what travels over the wire. */
export function prepare(message: OutgoingMessage, entity: SendTarget): PreparedMessage {
  const { messageId, sessionId } = message;
  if (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > MAX_ID_LENGTH) {
    throw new DependencyError('Service Bus', `A messageId must be 1 to ${MAX_ID_LENGTH} characters long.`);
  }
  if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId.length > MAX_ID_LENGTH)) {
    throw new DependencyError(
      'Service Bus',
      `Message '${messageId}': a sessionId is at most ${MAX_ID_LENGTH} characters.`,
    );
  }
  if (entity.kind === 'queue' && entity.store.requiresSession && sessionId === undefined) {
    throw new DependencyError(
      'Service Bus',
      `Message '${messageId}' has no sessionId, and queue '${entity.name}' requires sessions: ` +
        'Service Bus refuses such a message.',
    );
  }
  return {
    bodyText: serializeBody(message),
    messageId,
    sessionId,
    correlationId: message.correlationId,
    subject: message.subject,
    contentType: CONTENT_TYPE,
    applicationProperties: { ...message.applicationProperties },
  };
}

/** The body as @azure/service-bus encodes a non-binary body: JSON text, with undefined sent as null. */
function serializeBody(message: OutgoingMessage): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(message.body ?? null);
  } catch (error) {
    throw new DependencyError(
      'Service Bus',
      `Message '${message.messageId}': the body is not JSON-serialisable.`,
      {
        cause: error,
      },
    );
  }
  if (text === undefined) {
    throw new DependencyError(
      'Service Bus',
      `Message '${message.messageId}': the body is not JSON-serialisable.`,
    );
  }
  return text;
}

/**
 * With the latency model: the last send to each entity, accepted or not yet. A send is accepted after its own draw
 * and after every send made earlier to the same entity, so the model keeps the order of sends as Service Bus does
 * (timers that end in the same millisecond may fire in any order: a deadline alone does not keep it).
 */
export class SendOrder {
  private readonly lastAccept = new Map<string, Promise<void>>();

  /** Runs `accept` once `delayMs` has passed and every earlier send to `key` was accepted or refused. */
  accept(key: string, delayMs: number, accept: () => void): Promise<void> {
    const acceptAt = Date.now() + delayMs;
    const accepted = (this.lastAccept.get(key) ?? Promise.resolve()).then(async () => {
      await sleep(Math.max(0, acceptAt - Date.now()));
      accept();
    });
    this.lastAccept.set(
      key,
      accepted.catch(() => undefined),
    );
    return accepted;
  }
}
