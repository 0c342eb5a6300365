// The Web PubSub adapter of MemoryNotices: one JSON message to the user, which reaches every connection a page of
// theirs opened (negotiate gives each the caller's user id).
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { DependencyError, ensureError } from '../../errors.js';
import type { MemoryNotices } from '../memory-notices.js';

export function createWebPubSubMemoryNotices(client: WebPubSubServiceClient): MemoryNotices {
  return {
    async memoryChanged(userId, notice) {
      try {
        await client.sendToUser(userId, notice);
      } catch (error) {
        throw new DependencyError(
          'webPubSub',
          `Telling the pages of ${userId} that memory changed failed: ${ensureError(error).message}`,
          { cause: error },
        );
      }
    },
  };
}
