// The Web PubSub adapter of TurnEventSink: sends each event of a turn to every live connection of the user,
// one after another so they arrive in seq order. An object message goes out as application/json.
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { DependencyError, ensureError } from '../../errors.js';
import type { TurnEventSink } from '../turn-event-sink.js';

export function createWebPubSubEventSink(client: WebPubSubServiceClient): TurnEventSink {
  return {
    async send({ userId }, events) {
      for (const event of events) {
        try {
          await client.sendToUser(userId, event);
        } catch (error) {
          throw new DependencyError(
            'webPubSub',
            `Sending event ${event.seq} of turn '${event.chatMessageId}' to the user failed: ${ensureError(error).message}`,
            { cause: error },
          );
        }
      }
    },
  };
}
