// The port through which use-cases put messages on Service Bus queues and topics. The Azure adapter
// (service-bus-publisher.ts) and the local runtime's in-process broker both implement it.

export interface OutgoingMessage {
  /** JSON-serialisable body. */
  body: unknown;
  /** Used for duplicate detection: a second message with the same id within the window is dropped. */
  messageId: string;
  /** Service Bus session id: messages of one session are delivered in order, one at a time. */
  sessionId?: string;
  correlationId?: string;
  subject?: string;
  applicationProperties?: Record<string, string | number | boolean>;
}

export interface MessagePublisher {
  /** Sends to a queue or topic by name; resolves once the broker has accepted the messages. */
  publish(entity: string, messages: OutgoingMessage | readonly OutgoingMessage[]): Promise<void>;
  close(): Promise<void>;
}
