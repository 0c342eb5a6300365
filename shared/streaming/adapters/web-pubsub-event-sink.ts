// The Web PubSub adapter of TurnEventSink: a batch of a turn's events goes to the session's group as ONE message,
// a JSON array in seq order (one REST call, and Web PubSub bills per message in 2 KB units, so a batch of small
// events costs what one does). A batch too large for one message (the service's limit is 1 MB) is split, in order.
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { DependencyError, ensureError } from '../../errors.js';
import { sessionGroup, type ChatEvent } from '../contracts.js';
import type { TurnEventSink } from '../turn-event-sink.js';

/** Below the service's 1 MB message limit, leaving room for the envelope. */
export const MAX_MESSAGE_BYTES = 1_000_000;

export function createWebPubSubEventSink(
  client: WebPubSubServiceClient,
  options: { maxMessageBytes?: number } = {},
): TurnEventSink {
  const maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  return {
    async send(turn, events) {
      const group = client.group(sessionGroup(turn.sessionId));
      for (const message of messagesOf(events, maxBytes)) {
        try {
          await group.sendToAll(message);
        } catch (error) {
          const first = message[0]!;
          throw new DependencyError(
            'webPubSub',
            `Sending events ${first.seq}..${message.at(-1)!.seq} of turn '${first.chatMessageId}' to its session failed: ${ensureError(error).message}`,
            { cause: error },
          );
        }
      }
    },
  };
}

/** The batch as messages: all of it in one, unless it is larger than a message may be. Never an empty message. */
export function messagesOf(events: readonly ChatEvent[], maxBytes: number): ChatEvent[][] {
  const messages: ChatEvent[][] = [];
  let current: ChatEvent[] = [];
  let bytes = 2; // the brackets
  for (const event of events) {
    const size = Buffer.byteLength(JSON.stringify(event)) + 1; // and its comma
    if (current.length > 0 && bytes + size > maxBytes) {
      messages.push(current);
      current = [];
      bytes = 2;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) messages.push(current);
  return messages;
}
