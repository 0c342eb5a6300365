// The header's Settings button and the dialog it opens (full screen on a phone); what the dialog holds is a chunk
// of its own, loaded when it is first opened.
import { Settings, X } from 'lucide-react';
import { Dialog } from 'radix-ui';
import { lazy, Suspense, useEffect, useState } from 'react';
import type { ReactNode } from 'react';
import type { ApiClient } from '../api/client';
import { IconButton } from '../ui/IconButton';
import { oauthReturnOf, type OAuthReturn } from './mcp-servers-api';

const McpServersSettings = lazy(() =>
  import('./McpServersSettings').then((module) => ({ default: module.McpServersSettings })),
);
const ApiKeysSettings = lazy(() =>
  import('./ApiKeysSettings').then((module) => ({ default: module.ApiKeysSettings })),
);
const AssistantsSettings = lazy(() =>
  import('../workspace/AssistantsSettings').then((module) => ({ default: module.AssistantsSettings })),
);

export function SettingsDialog(props: { api: ApiClient }): ReactNode {
  // Back from an MCP server's consent: the dialog opens on the servers, saying how it went.
  const [oauthReturn] = useState<OAuthReturn | undefined>(() => oauthReturnOf(window.location.search));
  const [open, setOpen] = useState(oauthReturn !== undefined);
  useEffect(() => {
    if (oauthReturn === undefined) return;
    const url = new URL(window.location.href);
    for (const name of ['mcpOAuth', 'mcpServer', 'reason']) url.searchParams.delete(name);
    window.history.replaceState(window.history.state, '', url.href);
  }, [oauthReturn]);
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <IconButton
        label="Settings"
        icon={<Settings size={18} aria-hidden />}
        aria-haspopup="dialog"
        aria-expanded={open}
        onClick={() => setOpen(true)}
      />
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-40 bg-black/45" />
        <Dialog.Content
          aria-describedby={undefined}
          className="fixed inset-0 z-40 flex flex-col bg-page text-fg shadow-xl sm:inset-auto sm:top-1/2 sm:left-1/2 sm:max-h-[calc(100vh-4rem)] sm:w-[min(40rem,calc(100vw-2rem))] sm:-translate-x-1/2 sm:-translate-y-1/2 sm:rounded-lg sm:border sm:border-line"
        >
          <div className="flex items-center justify-between border-b border-line px-4 py-2">
            <Dialog.Title className="m-0 text-lg font-semibold">Settings</Dialog.Title>
            <Dialog.Close className="btn btn-quiet btn-icon" aria-label="Close settings">
              <X size={18} aria-hidden />
            </Dialog.Close>
          </div>
          <div className="min-h-0 flex-1 overflow-y-auto p-4">
            <Suspense fallback={<p className="muted m-0">Loading…</p>}>
              <div className="flex flex-col gap-6">
                <AssistantsSettings key={`assistants:${props.api.userId}`} api={props.api} />
                <McpServersSettings key={props.api.userId} api={props.api} oauthReturn={oauthReturn} />
                <ApiKeysSettings key={`api-keys:${props.api.userId}`} api={props.api} />
              </div>
            </Suspense>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
