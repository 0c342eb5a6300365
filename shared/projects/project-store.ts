// The port of projects, each in its owner's partition. Adapter: adapters/cosmos-project-store.ts.
import type { Project } from './contracts.js';

export interface ProjectStore {
  put(project: Project): Promise<void>;
  /** The user's project; undefined when the user has none with that id. */
  find(userId: string, projectId: string): Promise<Project | undefined>;
  list(userId: string): Promise<Project[]>;
  /** Harmless when it is gone. */
  remove(userId: string, projectId: string): Promise<void>;
  /** Removes every project of the user; how many there were. */
  removeAll(userId: string): Promise<number>;
}
