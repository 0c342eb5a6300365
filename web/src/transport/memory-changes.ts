// The memory worker's notices that a turn changed the user's memory, as the page's live connection receives them
// (a Web PubSub message to the user), passed on to whoever shows memory so it refreshes without being asked.
import type { MemoryChanged } from '../../../shared/memory/contracts.js';

type Listener = (notice: MemoryChanged) => void;

const listeners = new Set<Listener>();

/** Calls `listener` on each notice; the function returned stops it. */
export function onMemoryChanged(listener: Listener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** Passes on a server message that is a memory notice; anything else is not one (false). */
export function receiveServerMessage(data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return false;
  const notice = data as Partial<MemoryChanged>;
  if (notice.type !== 'memory-changed' || typeof notice.sessionId !== 'string') return false;
  for (const listener of listeners) listener(notice as MemoryChanged);
  return true;
}
