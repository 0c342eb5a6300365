// The port through which the memory worker tells a user's open pages that their memory changed, so a memory panel
// shows new facts without being asked. Adapter: Web PubSub (adapters/web-pubsub-memory-notices.ts).
import type { MemoryChanged } from './contracts.js';

export interface MemoryNotices {
  /** Sends the notice to every live connection of the user (any conversation they have open). */
  memoryChanged(userId: string, notice: MemoryChanged): Promise<void>;
}
