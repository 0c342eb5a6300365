// The port of assistants: heads and version snapshots. Adapter: adapters/cosmos-assistant-store.ts.
import type { Assistant } from './contracts.js';

export interface AssistantStore {
  /** Stores a new version: its snapshot, then the head. False when that version exists already (a racing edit). */
  putVersion(assistant: Assistant): Promise<boolean>;
  /** The assistant as it is now; undefined when there is none. */
  head(assistantId: string): Promise<Assistant | undefined>;
  /** The snapshot of one version; undefined when there is none. */
  version(assistantId: string, version: number): Promise<Assistant | undefined>;
  /** The caller's own assistants and every public one. */
  visibleTo(userId: string): Promise<Assistant[]>;
  /** Removes the assistant with every version; harmless when it is gone. */
  remove(assistantId: string): Promise<void>;
  /** The ids of every assistant the user owns (for erasing their data). */
  ownedBy(userId: string): Promise<string[]>;
}
