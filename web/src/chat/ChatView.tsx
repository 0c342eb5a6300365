// The chat: the conversation's messages as they stream, and the composer.
import type { ReactNode } from 'react';
import type { ApiClient } from '../api/client';

export interface ChatViewProps {
  readonly api: ApiClient;
  /** The conversation to show; undefined for a new one, whose id is chosen on the first send. */
  readonly sessionId: string | undefined;
  readonly onSessionStarted: (sessionId: string) => void;
}

export function ChatView(props: ChatViewProps): ReactNode {
  return (
    <section className="chat" aria-label="Chat">
      <p className="muted">{props.sessionId === undefined ? 'A new conversation.' : props.sessionId}</p>
    </section>
  );
}
