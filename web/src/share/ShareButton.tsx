// The "Share" action of an open conversation: makes a link to it as it is shown now and offers to copy it.
import { useState } from 'react';
import type { ReactNode } from 'react';
import type { ApiClient } from '../api/client';
import { describeError } from '../api/client';
import { shareConversation } from './shared-conversation-api';

export function ShareButton(props: { api: ApiClient; sessionId: string }): ReactNode {
  const [state, setState] = useState<{ url?: string; failure?: string; busy?: boolean }>({});
  const onShare = () => {
    setState({ busy: true });
    shareConversation(props.api, props.sessionId).then(
      ({ url }) => {
        setState({ url });
        void navigator.clipboard?.writeText(url).catch(() => undefined);
      },
      (error: unknown) => setState({ failure: describeError(error) }),
    );
  };
  return (
    <span className="share-action">
      <button type="button" className="button-quiet" onClick={onShare} disabled={state.busy === true}>
        Share
      </button>
      {state.url === undefined ? null : (
        <input
          className="share-url"
          aria-label="Share link (copied)"
          readOnly
          value={state.url}
          onFocus={(event) => event.currentTarget.select()}
        />
      )}
      {state.failure === undefined ? null : <span role="alert">{state.failure}</span>}
    </span>
  );
}
