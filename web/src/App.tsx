// The page's shell: a header, the conversations sidebar, the chat, and a side panel for memory and knowledge.
// On a phone-sized screen the three regions become tabs, one shown at a time.
import { createContext, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import type { ReactNode } from 'react';
import { createApiClient } from './api/client';
import type { ApiClient } from './api/client';
import { IdentityProvider, useIdentity } from './auth/identity';
import { SignIn } from './auth/SignIn';
import { ChatView } from './chat/ChatView';
import { ConversationSidebar } from './panels/ConversationSidebar';
import { SidePanels } from './panels/SidePanels';
import { ShareButton } from './share/ShareButton';
import { useTheme } from './theme';

type Region = 'conversations' | 'chat' | 'panels';
// Where /api lives: this page's own origin, unless the build names another (the Static Web App on Azure).
const builtApiBase: unknown = import.meta.env.VITE_API_BASE_URL;
const API_BASE = typeof builtApiBase === 'string' ? builtApiBase : '';

/** What the sidebar and panels get from the shell; kept small so each region is built on its own. */
export interface ShellState {
  readonly api: ApiClient;
  readonly activeSessionId: string | undefined;
  readonly onOpen: (sessionId: string) => void;
  readonly onNew: () => void;
}

const ShellContext = createContext<ShellState | undefined>(undefined);

/** The shell's state for the sidebar and panels (undefined while nobody is signed in). */
export function useShell(): ShellState | undefined {
  return useContext(ShellContext);
}

// Nobody until the sign-in control has read how this deployment identifies users (a dev user only in dev mode).
export function App(): ReactNode {
  return (
    <IdentityProvider>
      <Shell />
    </IdentityProvider>
  );
}

function Shell(): ReactNode {
  const identity = useIdentity();
  const { theme, toggle } = useTheme();
  const [region, setRegion] = useState<Region>('chat');
  // The open conversation is in the address (?session=), so a reload or a bookmark comes back to it.
  const [activeSessionId, setActiveSessionId] = useState<string | undefined>(
    () => new URLSearchParams(window.location.search).get('session') ?? undefined,
  );
  useEffect(() => {
    const url = new URL(window.location.href);
    if (activeSessionId === undefined) url.searchParams.delete('session');
    else url.searchParams.set('session', activeSessionId);
    if (url.href !== window.location.href) window.history.replaceState(null, '', url);
  }, [activeSessionId]);
  // Opening or starting a conversation remounts the chat view; a new chat learning its id does not.
  const [chatKey, setChatKey] = useState(0);
  const api = useMemo(
    () => (identity === undefined ? undefined : createApiClient(identity, API_BASE)),
    [identity],
  );

  const onOpen = useCallback((sessionId: string) => {
    setActiveSessionId(sessionId);
    setChatKey((key) => key + 1);
    setRegion('chat');
  }, []);
  const onNew = useCallback(() => {
    setActiveSessionId(undefined);
    setChatKey((key) => key + 1);
    setRegion('chat');
  }, []);

  const shell = useMemo(
    () => (api === undefined ? undefined : { api, activeSessionId, onOpen, onNew }),
    [api, activeSessionId, onOpen, onNew],
  );

  const regionTabs: { id: Region; label: string }[] = [
    { id: 'conversations', label: 'Conversations' },
    { id: 'chat', label: 'Chat' },
    { id: 'panels', label: 'Memory & knowledge' },
  ];

  return (
    <ShellContext.Provider value={shell}>
      <div className="shell" data-region={region}>
        <header className="shell-header">
          <h1 className="shell-title">Memory chat</h1>
          <div className="shell-actions">
            <SignIn apiBase={API_BASE} />
            {shell?.activeSessionId === undefined ? null : (
              <ShareButton key={shell.activeSessionId} api={shell.api} sessionId={shell.activeSessionId} />
            )}
            <button type="button" className="button-quiet" onClick={onNew}>
              New chat
            </button>
            <button
              type="button"
              className="button-quiet"
              onClick={toggle}
              aria-pressed={theme === 'dark'}
              title="Switch between light and dark"
            >
              Dark theme
            </button>
          </div>
        </header>
        <nav className="shell-tabs" aria-label="Regions">
          {regionTabs.map((tab) => (
            <button
              key={tab.id}
              type="button"
              aria-pressed={region === tab.id}
              onClick={() => setRegion(tab.id)}
            >
              {tab.label}
            </button>
          ))}
        </nav>
        <aside className="shell-sidebar" aria-label="Conversations">
          {shell === undefined ? null : (
            <ConversationSidebar
              api={shell.api}
              activeSessionId={shell.activeSessionId}
              onOpen={onOpen}
              onNew={onNew}
            />
          )}
        </aside>
        <main className="shell-chat">
          {api === undefined ? (
            <p className="muted">Sign in to chat.</p>
          ) : (
            <ChatView
              key={`${identity?.userId ?? ''}:${chatKey}`}
              api={api}
              sessionId={activeSessionId}
              onSessionStarted={setActiveSessionId}
            />
          )}
        </main>
        <aside className="shell-panels" aria-label="Memory and knowledge">
          {shell === undefined ? null : (
            <SidePanels
              apiBase={API_BASE}
              api={shell.api}
              activeSessionId={shell.activeSessionId}
              onOpen={onOpen}
            />
          )}
        </aside>
      </div>
    </ShellContext.Provider>
  );
}
