// The page at /s/{shareId}: a shared conversation, read by anyone with the link without signing in, marked
// noindex; a signed-in reader may continue it as a conversation of their own.
import { useEffect, useState } from 'react';
import type { ReactNode } from 'react';
import { createApiClient, describeError } from '../api/client';
import { IdentityProvider, useIdentity } from '../auth/identity';
import { SignIn } from '../auth/SignIn';
import { continueSharedConversation, readSharedConversation } from './shared-conversation-api';
import type { SharedConversationBody, SharedMessage } from './shared-conversation-api';
import './shared-conversation.css';

const builtApiBase: unknown = import.meta.env.VITE_API_BASE_URL;
const API_BASE = typeof builtApiBase === 'string' ? builtApiBase : '';

type Loaded =
  | { kind: 'loading' }
  | { kind: 'missing'; message: string }
  | { kind: 'shown'; conversation: SharedConversationBody };

/** Keeps search engines away from the page while it is shown (the server also says so in a header). */
function useNoIndex(): void {
  useEffect(() => {
    const meta = document.createElement('meta');
    meta.name = 'robots';
    meta.content = 'noindex, nofollow';
    document.head.append(meta);
    return () => meta.remove();
  }, []);
}

export function SharedConversation(props: { shareId: string }): ReactNode {
  return (
    <IdentityProvider>
      <SharedPage shareId={props.shareId} />
    </IdentityProvider>
  );
}

function SharedPage({ shareId }: { shareId: string }): ReactNode {
  useNoIndex();
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });
  useEffect(() => {
    let current = true;
    readSharedConversation(API_BASE, shareId).then(
      (conversation) => {
        if (!current) return;
        setLoaded({ kind: 'shown', conversation });
        document.title = `${conversation.title} · shared conversation`;
      },
      (error: unknown) => {
        if (current) setLoaded({ kind: 'missing', message: describeError(error) });
      },
    );
    return () => {
      current = false;
    };
  }, [shareId]);

  return (
    <div className="shared-page">
      <header className="shared-header">
        <p className="shared-label">Shared conversation</p>
        <div className="shared-sign-in">
          <SignIn apiBase={API_BASE} />
        </div>
      </header>
      <main>
        {loaded.kind === 'loading' ? <p role="status">Loading…</p> : null}
        {loaded.kind === 'missing' ? (
          <section className="shared-missing" role="alert">
            <h1>This link does not work</h1>
            <p>{loaded.message}</p>
          </section>
        ) : null}
        {loaded.kind === 'shown' ? <Shown conversation={loaded.conversation} /> : null}
      </main>
    </div>
  );
}

function Shown({ conversation }: { conversation: SharedConversationBody }): ReactNode {
  return (
    <article className="shared-conversation">
      <h1>{conversation.title}</h1>
      <p className="shared-meta">
        Shared {new Date(conversation.createdAt).toLocaleString()}
        {conversation.expiresAt === null
          ? ''
          : ` · link works until ${new Date(conversation.expiresAt).toLocaleString()}`}
      </p>
      <ol className="shared-messages">
        {conversation.messages.map((message, index) => (
          <SharedMessageView key={index} message={message} />
        ))}
      </ol>
      <ContinueButton shareId={conversation.shareId} />
    </article>
  );
}

function SharedMessageView({ message }: { message: SharedMessage }): ReactNode {
  return (
    <li className={`shared-message shared-message-${message.role}`} data-role={message.role}>
      <p className="shared-who">
        {message.role === 'user' ? 'Question' : 'Answer'}{' '}
        <time dateTime={message.timestamp}>{new Date(message.timestamp).toLocaleString()}</time>
      </p>
      <div className="shared-text">{message.content}</div>
      {message.toolCalls?.map((call, index) => (
        <details key={index} className="shared-tool">
          <summary>Tool {call.name}</summary>
          <pre>{call.arguments}</pre>
          <pre>{call.result}</pre>
        </details>
      ))}
      {message.sources === undefined ? null : (
        <ul className="shared-sources" aria-label="Sources">
          {message.sources.map((source, index) => (
            <li key={index}>{source.citation}</li>
          ))}
        </ul>
      )}
    </li>
  );
}

function ContinueButton({ shareId }: { shareId: string }): ReactNode {
  const identity = useIdentity();
  const [failure, setFailure] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  if (identity === undefined)
    return <p className="shared-continue">Sign in to continue this conversation as your own.</p>;
  const onContinue = () => {
    setBusy(true);
    continueSharedConversation(createApiClient(identity, API_BASE), shareId).then(
      ({ sessionId }) => {
        window.location.assign(`/?session=${encodeURIComponent(sessionId)}`);
      },
      (error: unknown) => {
        setBusy(false);
        setFailure(describeError(error));
      },
    );
  };
  return (
    <div className="shared-continue">
      <button type="button" className="btn btn-primary" onClick={onContinue} disabled={busy}>
        Continue this conversation
      </button>
      {failure === undefined ? null : <p role="alert">{failure}</p>}
    </div>
  );
}
