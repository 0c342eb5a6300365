// The page's shell: a header, the conversations sidebar, the chat, and a side panel for memory and knowledge.
// Where the screen is too narrow for them, the sidebar and the panel become drawers opened from the header.
import { BookOpen, Menu, Moon, SquarePen, Sun } from 'lucide-react';
import { Tooltip } from 'radix-ui';
import { lazy, Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import type { ReactNode } from 'react';
import { createApiClient } from './api/client';
import type { ApiClient } from './api/client';
import { IdentityProvider, useIdentity } from './auth/identity';
import { SignIn } from './auth/SignIn';
import { ChatLoading } from './chat/ChatLoading';
import { ConversationSidebar } from './panels/ConversationSidebar';
import { SidePanels } from './panels/SidePanels';
import { SettingsDialog } from './settings/SettingsDialog';
import { ShareButton } from './share/ShareButton';
import { useTheme } from './theme';
import { Drawer } from './ui/Drawer';
import { ProjectsBar } from './workspace/ProjectsBar';
import { IconButton } from './ui/IconButton';
import { useMediaQuery } from './ui/use-media-query';

type Drawn = 'conversations' | 'panels' | undefined;

/** A side region of the shell: where it goes, what its drawer and header button say, and what it holds. */
interface SideRegion {
  side: 'left' | 'right';
  title: string;
  buttonLabel: string;
  icon: ReactNode;
  /** Shown as a column beside the chat (the screen is wide enough), rather than as a drawer. */
  column: boolean;
  columnClass: string;
  content: ReactNode;
}
/** From this width the sidebar is a column beside the chat, and from the next one the panels are too. */
const SIDEBAR_COLUMN = '(min-width: 900px)';
const PANELS_COLUMN = '(min-width: 1200px)';
// Where /api lives: this page's own origin, unless the build names another (the Static Web App on Azure).
// The chat (with the AI SDK) is a chunk of its own: the shell paints first, with the chat's greeting in place.
// Its download starts with the page's, not once the sign-in has settled.
const chatModule = import('./chat/ChatView');
const ChatView = lazy(() => chatModule.then((module) => ({ default: module.ChatView })));
const builtApiBase: unknown = import.meta.env.VITE_API_BASE_URL;
const API_BASE = typeof builtApiBase === 'string' ? builtApiBase : '';

/** What the sidebar and panels get from the shell; kept small so each region is built on its own. */
export interface ShellState {
  readonly api: ApiClient;
  readonly activeSessionId: string | undefined;
  readonly onOpen: (sessionId: string) => void;
  readonly onNew: () => void;
  /** The open conversation's title, once known (the tab's title follows it). */
  readonly onTitle: (title: string | undefined) => void;
}

// Nobody until the sign-in control has read how this deployment identifies users (a dev user only in dev mode).
export function App(): ReactNode {
  return (
    <IdentityProvider>
      <Tooltip.Provider delayDuration={400}>
        <Shell />
      </Tooltip.Provider>
    </IdentityProvider>
  );
}

function Shell(): ReactNode {
  const identity = useIdentity();
  const userId = identity?.userId;
  const { theme, toggle } = useTheme();
  const sidebarColumn = useMediaQuery(SIDEBAR_COLUMN);
  const panelsColumn = useMediaQuery(PANELS_COLUMN);
  const [drawn, setDrawn] = useState<Drawn>(undefined);
  // The open conversation is in the address (?session=), so a reload or a bookmark comes back to it.
  const [activeSessionId, setActiveSessionId] = useState<string | undefined>(
    () => new URLSearchParams(window.location.search).get('session') ?? undefined,
  );
  useEffect(() => {
    const url = new URL(window.location.href);
    if (activeSessionId === undefined) url.searchParams.delete('session');
    else url.searchParams.set('session', activeSessionId);
    // A dev user named in the address follows the one picked, so a reload stays with them.
    if (userId !== undefined && url.searchParams.has('user')) url.searchParams.set('user', userId);
    if (url.href !== window.location.href) window.history.replaceState(null, '', url);
  }, [activeSessionId, userId]);
  const [title, setTitle] = useState<string | undefined>(undefined);
  // The sidebar's project filter; a new chat started while it is set is filed in that project.
  const [projectId, setProjectId] = useState<string | undefined>(undefined);
  // Another user signing in (another dev user picked) starts from a new chat: the open one is not theirs.
  const [shownUser, setShownUser] = useState(userId);
  if (userId !== shownUser) {
    setShownUser(userId);
    if (shownUser !== undefined) {
      setActiveSessionId(undefined);
      setTitle(undefined);
      setProjectId(undefined);
    }
  }
  useEffect(() => {
    document.title = title === undefined || title === '' ? 'Memory chat' : `${title} · Memory chat`;
  }, [title]);
  // Opening or starting a conversation remounts the chat view; a new chat learning its id does not.
  const [chatKey, setChatKey] = useState(0);
  const api = useMemo(
    () => (identity === undefined ? undefined : createApiClient(identity, API_BASE)),
    [identity],
  );

  const onOpen = useCallback((sessionId: string) => {
    setActiveSessionId(sessionId);
    setChatKey((key) => key + 1);
    setDrawn(undefined);
  }, []);
  const onNew = useCallback(() => {
    setActiveSessionId(undefined);
    setTitle(undefined);
    setChatKey((key) => key + 1);
    setDrawn(undefined);
  }, []);

  // Ctrl+Shift+O (Cmd+Shift+O on a Mac) starts a new chat, as in the chat apps people know.
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent): void => {
      if ((event.ctrlKey || event.metaKey) && event.shiftKey && event.key.toLowerCase() === 'o') {
        event.preventDefault();
        onNew();
      }
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [onNew]);

  const shell = useMemo(
    () => (api === undefined ? undefined : { api, activeSessionId, onOpen, onNew, onTitle: setTitle }),
    [api, activeSessionId, onOpen, onNew],
  );

  const sidebar =
    shell === undefined ? null : (
      <aside aria-label="Conversations" className="h-full">
        <ProjectsBar
          key={shell.api.userId}
          api={shell.api}
          projectId={projectId}
          onProjectId={setProjectId}
          activeSessionId={shell.activeSessionId}
        />
        <ConversationSidebar
          projectId={projectId}
          api={shell.api}
          activeSessionId={shell.activeSessionId}
          onOpen={onOpen}
          onNew={onNew}
          onTitle={setTitle}
        />
      </aside>
    );
  const panels =
    shell === undefined ? null : (
      <aside aria-label="Memory and knowledge" className="h-full">
        <SidePanels
          apiBase={API_BASE}
          api={shell.api}
          activeSessionId={shell.activeSessionId}
          onOpen={onOpen}
        />
      </aside>
    );
  const nextTheme = theme === 'dark' ? 'light' : 'dark';
  // The two side regions: a column where the screen is wide enough, else a drawer opened from a header button.
  const regions: Record<Exclude<Drawn, undefined>, SideRegion> = {
    conversations: {
      side: 'left',
      title: 'Conversations',
      buttonLabel: 'Conversations',
      icon: <Menu size={20} aria-hidden />,
      column: sidebarColumn,
      columnClass: 'w-64 border-r',
      content: sidebar,
    },
    panels: {
      side: 'right',
      title: 'Memory and knowledge',
      buttonLabel: 'Memory & knowledge',
      icon: <BookOpen size={18} aria-hidden />,
      column: panelsColumn,
      columnClass: 'w-80 border-l',
      content: panels,
    },
  };
  const drawerButton = (which: Exclude<Drawn, undefined>): ReactNode => {
    const region = regions[which];
    return region.column ? null : (
      <IconButton
        label={region.buttonLabel}
        icon={region.icon}
        aria-expanded={drawn === which}
        onClick={() => setDrawn(which)}
      />
    );
  };
  const placed = (which: Exclude<Drawn, undefined>): ReactNode => {
    const region = regions[which];
    return region.column ? (
      <div className={`shrink-0 overflow-y-auto border-line bg-soft p-3 ${region.columnClass}`}>
        {region.content}
      </div>
    ) : (
      <Drawer
        side={region.side}
        title={region.title}
        open={drawn === which}
        onOpenChange={(open) => setDrawn(open ? which : undefined)}
      >
        {region.content}
      </Drawer>
    );
  };

  return (
    <>
      <div className="flex h-full min-w-0 flex-col">
        <header className="flex min-w-0 items-center gap-1 border-b border-line bg-soft px-2 py-1.5 sm:gap-2 sm:px-3">
          {drawerButton('conversations')}
          <h1 className="m-0 min-w-0 flex-1 truncate text-base font-semibold sm:text-lg">Memory chat</h1>
          <div className="flex min-w-0 shrink items-center gap-1 sm:gap-2">
            <SignIn apiBase={API_BASE} />
            {shell?.activeSessionId === undefined ? null : (
              <ShareButton key={shell.activeSessionId} api={shell.api} sessionId={shell.activeSessionId} />
            )}
            <IconButton label="New chat" icon={<SquarePen size={18} aria-hidden />} onClick={onNew} />
            <IconButton
              label={`Switch to ${nextTheme} theme`}
              icon={theme === 'dark' ? <Sun size={18} aria-hidden /> : <Moon size={18} aria-hidden />}
              onClick={toggle}
            />
            {shell === undefined ? null : <SettingsDialog api={shell.api} />}
            {drawerButton('panels')}
          </div>
        </header>
        <div className="flex min-h-0 min-w-0 flex-1">
          {placed('conversations')}
          <main className="flex min-h-0 min-w-0 flex-1 flex-col">
            {api === undefined ? (
              <p className="muted p-4">Sign in to chat.</p>
            ) : (
              <Suspense fallback={<ChatLoading sessionId={activeSessionId} />}>
                <ChatView
                  key={`${identity?.userId ?? ''}:${chatKey}`}
                  api={api}
                  sessionId={activeSessionId}
                  onSessionStarted={setActiveSessionId}
                  projectId={projectId}
                />
              </Suspense>
            )}
          </main>
          {placed('panels')}
        </div>
      </div>
    </>
  );
}
