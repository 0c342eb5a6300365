// Tells the parts of the page that list conversations that a turn of one ended (its count, preview and title may
// have changed), so the sidebar is never a turn behind.
type Listener = (sessionId: string) => void;

const listeners = new Set<Listener>();

/** Calls `listener` after each turn that ended in this page; the function returned stops it. */
export function onTurnEnded(listener: Listener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function turnEnded(sessionId: string): void {
  for (const listener of listeners) listener(sessionId);
}
