// What the chat region shows while the chat's code loads (it is a chunk of its own, with the AI SDK): the new
// chat's greeting and an inert composer in their places, so the page paints early and nothing moves after.
import type { ReactNode } from 'react';
import { EmptyState } from './EmptyState';

export function ChatLoading(props: { sessionId: string | undefined }): ReactNode {
  return (
    <section className="flex h-full min-h-0 flex-col" aria-label="Chat" aria-busy>
      <div className="mx-auto flex min-h-0 w-full max-w-3xl flex-1 flex-col p-3 sm:p-4">
        {props.sessionId === undefined ? (
          <EmptyState disabled onStart={() => undefined} />
        ) : (
          <p className="muted m-0" role="status">
            Loading the conversation…
          </p>
        )}
      </div>
      <div className="mx-auto w-full max-w-3xl px-2 pb-2 sm:px-4 sm:pb-4" aria-hidden>
        <div className="h-[5.25rem] rounded-2xl border border-line bg-raised shadow-sm" />
      </div>
    </section>
  );
}
