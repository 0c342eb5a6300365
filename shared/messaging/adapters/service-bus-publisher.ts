// The Azure adapter of MessagePublisher: sends to Service Bus queues and topics with @azure/service-bus,
// one cached sender per entity; many messages go in batches, split where the session id changes.
import {
  ServiceBusClient,
  type ServiceBusMessage,
  type ServiceBusMessageBatch,
  type TokenCredential,
} from '@azure/service-bus';
import { DependencyError, ensureError } from '../../errors.js';
import type { MessagePublisher, OutgoingMessage } from '../message-publisher.js';

/** The part of ServiceBusSender the adapter uses. */
export interface ServiceBusSenderLike {
  sendMessages(messages: ServiceBusMessage | ServiceBusMessageBatch): Promise<void>;
  createMessageBatch(): Promise<ServiceBusMessageBatch>;
  close(): Promise<void>;
}

/** The part of ServiceBusClient the adapter uses; a ServiceBusClient fits, and so does a test's fake. */
export interface ServiceBusClientLike {
  createSender(queueOrTopicName: string): ServiceBusSenderLike;
  close(): Promise<void>;
}

export type ServiceBusPublisherOptions =
  { fullyQualifiedNamespace: string; credential: TokenCredential } | { client: ServiceBusClientLike };

/** The content type of every message the app sends: bodies are JSON. */
export const MESSAGE_CONTENT_TYPE = 'application/json';

export function createServiceBusPublisher(options: ServiceBusPublisherOptions): MessagePublisher {
  // A client we create is ours to close; a client we are given belongs to the caller.
  const ownsClient = !('client' in options);
  const client: ServiceBusClientLike =
    'client' in options
      ? options.client
      : new ServiceBusClient(options.fullyQualifiedNamespace, options.credential);
  const senders = new Map<string, ServiceBusSenderLike>();
  let closed = false;

  function senderFor(entity: string): ServiceBusSenderLike {
    let sender = senders.get(entity);
    if (!sender) {
      sender = client.createSender(entity);
      senders.set(entity, sender);
    }
    return sender;
  }

  return {
    async publish(entity, messages) {
      if (closed) throw new Error('The Service Bus publisher is closed.');
      const list: readonly OutgoingMessage[] = isMessageList(messages) ? messages : [messages];
      if (list.length === 0) return;
      try {
        await send(senderFor(entity), list.map(toServiceBusMessage));
      } catch (error) {
        throw new DependencyError(
          'Service Bus',
          `Sending ${list.length} message(s) to '${entity}' failed: ${ensureError(error).message}`,
          { cause: error },
        );
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...senders.values()].map((sender) => sender.close()));
      senders.clear();
      if (ownsClient) await client.close();
    },
  };
}

/** Maps the app's message onto the SDK's; only fields that are set are sent. */
export function toServiceBusMessage(message: OutgoingMessage): ServiceBusMessage {
  const mapped: ServiceBusMessage = {
    body: message.body,
    messageId: message.messageId,
    contentType: MESSAGE_CONTENT_TYPE,
  };
  if (message.sessionId !== undefined) mapped.sessionId = message.sessionId;
  if (message.correlationId !== undefined) mapped.correlationId = message.correlationId;
  if (message.subject !== undefined) mapped.subject = message.subject;
  if (message.applicationProperties !== undefined)
    mapped.applicationProperties = { ...message.applicationProperties };
  return mapped;
}

/**
 * One message goes as is. Several go in batches: the SDK wants one session id per send, and a batch has a
 * size limit, so a new batch starts at each change of session id and whenever the current one is full.
 * Batches are sent in order, so each session's messages keep their order; the sends are not atomic together.
 */
async function send(sender: ServiceBusSenderLike, messages: readonly ServiceBusMessage[]): Promise<void> {
  const [only] = messages;
  if (messages.length === 1 && only) {
    await sender.sendMessages(only);
    return;
  }
  let batch = await sender.createMessageBatch();
  let batchSessionId: string | undefined;
  for (const message of messages) {
    if (batch.count > 0 && message.sessionId !== batchSessionId) {
      await sender.sendMessages(batch);
      batch = await sender.createMessageBatch();
    }
    if (!batch.tryAddMessage(message)) {
      if (batch.count === 0)
        throw new Error(`message '${String(message.messageId)}' is too large for a batch`);
      await sender.sendMessages(batch);
      batch = await sender.createMessageBatch();
      if (!batch.tryAddMessage(message)) {
        throw new Error(`message '${String(message.messageId)}' is too large for a batch`);
      }
    }
    batchSessionId = message.sessionId;
  }
  if (batch.count > 0) await sender.sendMessages(batch);
}

function isMessageList(
  messages: OutgoingMessage | readonly OutgoingMessage[],
): messages is readonly OutgoingMessage[] {
  return Array.isArray(messages);
}
