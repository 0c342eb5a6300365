// The "Share" action of an open conversation: makes a link to it as it is shown now, copies it, and shows it in a
// popover beside the button (the header has no room for it on a phone).
import { Share2 } from 'lucide-react';
import { Popover } from 'radix-ui';
import { useState } from 'react';
import type { ReactNode } from 'react';
import type { ApiClient } from '../api/client';
import { describeError } from '../api/client';
import { IconButton } from '../ui/IconButton';
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
  const open = state.url !== undefined || state.failure !== undefined;
  return (
    <Popover.Root open={open} onOpenChange={(next) => (next ? undefined : setState({}))}>
      <Popover.Anchor asChild>
        <span className="inline-flex">
          <IconButton
            label="Share"
            icon={<Share2 size={18} aria-hidden />}
            onClick={onShare}
            disabled={state.busy === true}
          />
        </span>
      </Popover.Anchor>
      <Popover.Portal>
        <Popover.Content
          sideOffset={6}
          collisionPadding={8}
          className="z-50 w-[min(22rem,calc(100vw-1rem))] rounded-lg border border-line bg-page p-3 text-sm shadow-lg"
        >
          {state.url === undefined ? (
            <p role="alert" className="m-0">
              {state.failure}
            </p>
          ) : (
            <label className="flex flex-col gap-1">
              <span>Share link (copied): anyone with it can read this conversation as it is now.</span>
              <input
                className="w-full min-w-0 rounded border border-line bg-soft px-2 py-1"
                aria-label="Share link (copied)"
                readOnly
                value={state.url}
                onFocus={(event) => event.currentTarget.select()}
              />
            </label>
          )}
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}
