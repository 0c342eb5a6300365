// The UserEventFeed on Web PubSub: listens to the events sent to a user (sendToUser) the way a browser does,
// with a client connection of its own. The client's default reliable JSON protocol resumes a briefly dropped
// connection without losing a message; whatever is lost beyond that, the relay's store reads recover.
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { WebPubSubClient, type OnServerDataMessageArgs } from '@azure/web-pubsub-client';
import { DependencyError, ensureError } from '../../errors.js';
import { chatEventSchema } from '../contracts.js';
import type { FeedSubscription, UserEventFeed } from '../user-event-feed.js';

/** How long close() waits for the connection to shut before giving up on it. */
const STOP_WAIT_MS = 5_000;

export function createWebPubSubEventFeed(
  service: WebPubSubServiceClient,
  options: { tokenMinutes?: number } = {},
): UserEventFeed {
  const expirationTimeInMinutes = options.tokenMinutes ?? 60;
  return {
    async subscribe(userId, onEvent) {
      const client = await connect(service, userId, expirationTimeInMinutes);
      let listening = true;
      client.on('server-message', (e: OnServerDataMessageArgs) => {
        const { dataType, data } = e.message;
        if (!listening || dataType !== 'json') return;
        // Only events of the vocabulary reach the relay; anything else on the connection is ignored.
        const parsed = chatEventSchema.safeParse(data);
        if (parsed.success) onEvent(parsed.data);
      });
      const stopped = new Promise<void>((resolve) => client.on('stopped', () => resolve()));
      try {
        await client.start();
      } catch (error) {
        throw feedError(userId, error);
      }
      return {
        async close() {
          if (!listening) return;
          listening = false;
          client.stop();
          await within(stopped, STOP_WAIT_MS);
        },
      } satisfies FeedSubscription;
    },
  };
}

async function connect(
  service: WebPubSubServiceClient,
  userId: string,
  expirationTimeInMinutes: number,
): Promise<WebPubSubClient> {
  try {
    const { url } = await service.getClientAccessToken({ userId, roles: [], expirationTimeInMinutes });
    return new WebPubSubClient(url);
  } catch (error) {
    throw feedError(userId, error);
  }
}

function feedError(userId: string, error: unknown): DependencyError {
  const reason = ensureError(error).message;
  return new DependencyError('webPubSub', `Could not listen to the events of user ${userId}: ${reason}`, {
    cause: error,
  });
}

/** Waits for `promise`, but no longer than `ms`; the timer never outlives the wait. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
