// The messages of one queue or subscription: what waits (per session, or in sequence order), what is out
// under a lock, and what was dead-lettered. Bookkeeping only; entity-receiver.ts does the delivering.
import type { ReceivedMessage } from './trigger-invocation.js';

/** A message as the broker keeps it: the body as the JSON text that went over the wire. */
export interface StoredMessage {
  readonly bodyText: string;
  readonly messageId: string;
  readonly sessionId: string | undefined;
  readonly correlationId: string | undefined;
  readonly subject: string | undefined;
  readonly contentType: string;
  readonly applicationProperties: Readonly<Record<string, string | number | boolean>>;
  readonly sequenceNumber: number;
  readonly enqueuedTimeUtc: Date;
  deliveryCount: number;
}

export interface DeadLetteredMessage extends Omit<ReceivedMessage, 'lockToken'> {
  readonly deadLetterReason: string;
  readonly deadLetterErrorDescription: string;
}

/** A dead-lettered message as the broker keeps it (and saves it). */
export interface DeadLetterRecord {
  readonly message: Readonly<StoredMessage>;
  readonly reason: string;
  readonly description: string;
}

/** The reason and description Service Bus gives a session-less message that reaches a session-enabled subscription. */
export const SESSION_ID_MISSING = {
  reason: 'Session ID is null.',
  description: "Session enabled entity doesn't allow a message whose session identifier is null.",
};

export class DeliveryQueue {
  /** Without sessions: waiting messages in sequence-number order. */
  private readonly waiting: StoredMessage[] = [];
  /** With sessions: each session's waiting messages in order; an entry stays while its session is locked. */
  private readonly sessions = new Map<string, StoredMessage[]>();
  private readonly lockedSessions = new Set<string>();
  private readonly deadLettered: DeadLetterRecord[] = [];
  /** Handed out and not yet settled (completed, abandoned or dead-lettered). */
  private readonly locked = new Set<StoredMessage>();

  constructor(
    /** Service Bus entity path: `queue` or `topic/Subscriptions/subscription`. */
    readonly path: string,
    readonly requiresSession: boolean,
    /** Called after every settlement (complete, abandon, dead-letter), so the broker can save its state. */
    private readonly onSettlement: () => void = () => undefined,
  ) {}

  enqueue(message: StoredMessage): void {
    if (!this.requiresSession) {
      this.waiting.push(message);
    } else if (message.sessionId === undefined) {
      this.deadLettered.push({
        message: { ...message },
        reason: SESSION_ID_MISSING.reason,
        description: SESSION_ID_MISSING.description,
      });
    } else {
      const session = this.sessions.get(message.sessionId);
      if (session) session.push(message);
      else this.sessions.set(message.sessionId, [message]);
    }
  }

  /** Without sessions: locks the next waiting message. */
  takeNext(): StoredMessage | undefined {
    const message = this.waiting.shift();
    if (message) this.locked.add(message);
    return message;
  }

  /** With sessions: locks the unlocked session whose oldest message is the oldest of all, if any. */
  lockNextSession(): string | undefined {
    let next: { sessionId: string; sequenceNumber: number } | undefined;
    for (const [sessionId, messages] of this.sessions) {
      const head = messages[0];
      if (!head || this.lockedSessions.has(sessionId)) continue;
      if (!next || head.sequenceNumber < next.sequenceNumber)
        next = { sessionId, sequenceNumber: head.sequenceNumber };
    }
    if (next) this.lockedSessions.add(next.sessionId);
    return next?.sessionId;
  }

  /** With sessions: locks the first waiting message of a session this receiver holds. */
  takeFromSession(sessionId: string): StoredMessage | undefined {
    const message = this.sessions.get(sessionId)?.shift();
    if (message) this.locked.add(message);
    return message;
  }

  unlockSession(sessionId: string): void {
    this.lockedSessions.delete(sessionId);
    if (this.sessions.get(sessionId)?.length === 0) this.sessions.delete(sessionId);
  }

  complete(message: StoredMessage): void {
    this.locked.delete(message);
    this.onSettlement();
  }

  /** Makes a locked message available again, ahead of the later messages (of its session). */
  abandon(message: StoredMessage): void {
    this.locked.delete(message);
    this.putBack(message);
    this.onSettlement();
  }

  deadLetter(message: StoredMessage, reason: string, description: string): void {
    this.locked.delete(message);
    this.deadLettered.push({ message: { ...message }, reason, description });
    this.onSettlement();
  }

  /** Puts back what a data file kept: live messages (in sequence order) and dead letters. */
  restore(messages: readonly StoredMessage[], deadLetters: readonly DeadLetterRecord[]): void {
    for (const message of [...messages].sort((a, b) => a.sequenceNumber - b.sequenceNumber)) {
      this.putBack(message);
    }
    this.deadLettered.push(...deadLetters);
  }

  get deadLetters(): readonly DeadLetteredMessage[] {
    return this.deadLettered.map(toDeadLettered);
  }

  /**
   * Everything a restart must keep: the live messages (waiting or locked) in sequence order, which is also
   * their order within each session, and the dead letters. Copies, so later deliveries do not change them.
   */
  snapshot(): { messages: StoredMessage[]; deadLetters: DeadLetterRecord[] } {
    const messages = [...this.waiting, ...[...this.sessions.values()].flat(), ...this.locked]
      .map((message) => ({ ...message }))
      .sort((a, b) => a.sequenceNumber - b.sequenceNumber);
    return { messages, deadLetters: [...this.deadLettered] };
  }

  /** Messages not yet settled: waiting or locked (dead-lettered ones are not counted, as in Service Bus). */
  get activeMessageCount(): number {
    return this.waitingCount + this.locked.size;
  }

  get hasWaiting(): boolean {
    return this.waitingCount > 0;
  }

  private get waitingCount(): number {
    let sessionMessages = 0;
    for (const messages of this.sessions.values()) sessionMessages += messages.length;
    return this.waiting.length + sessionMessages;
  }

  /** Inserts in sequence order: an abandoned message (its session's oldest) goes back to the head. */
  private putBack(message: StoredMessage): void {
    if (message.sessionId !== undefined && this.requiresSession) {
      const session = this.sessions.get(message.sessionId);
      if (session) insertInOrder(session, message);
      else this.sessions.set(message.sessionId, [message]);
    } else {
      insertInOrder(this.waiting, message);
    }
  }
}

function insertInOrder(messages: StoredMessage[], message: StoredMessage): void {
  const last = messages.at(-1);
  if (!last || last.sequenceNumber < message.sequenceNumber) {
    messages.push(message);
    return;
  }
  const index = messages.findIndex((waiting) => waiting.sequenceNumber > message.sequenceNumber);
  messages.splice(index, 0, message);
}

/** The message a receiver gets on one delivery: a fresh copy of the body and a new lock token. */
export function toReceivedMessage(message: StoredMessage, lockToken: string): ReceivedMessage {
  return { ...describe(message), lockToken };
}

function toDeadLettered({ message, reason, description }: DeadLetterRecord): DeadLetteredMessage {
  return { ...describe(message), deadLetterReason: reason, deadLetterErrorDescription: description };
}

function describe(message: StoredMessage): Omit<ReceivedMessage, 'lockToken'> {
  return {
    body: JSON.parse(message.bodyText) as unknown,
    messageId: message.messageId,
    sessionId: message.sessionId,
    correlationId: message.correlationId,
    subject: message.subject,
    contentType: message.contentType,
    applicationProperties: { ...message.applicationProperties },
    deliveryCount: message.deliveryCount,
    sequenceNumber: message.sequenceNumber,
    enqueuedTimeUtc: new Date(message.enqueuedTimeUtc),
  };
}
