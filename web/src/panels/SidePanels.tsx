// The side region's two panels, memory and knowledge, as tabs (arrow keys move between them, as the ARIA tabs
// pattern has it); only the shown panel is mounted, so a hidden one polls nothing.
import { useRef, useState } from 'react';
import type { KeyboardEvent, ReactNode } from 'react';
import type { ApiClient } from '../api/client';
import { KnowledgePanel } from './KnowledgePanel';
import { MemoryPanel } from './MemoryPanel';

type PanelId = 'memory' | 'knowledge';
const PANELS: readonly { id: PanelId; label: string }[] = [
  { id: 'memory', label: 'Memory' },
  { id: 'knowledge', label: 'Knowledge' },
];

export function SidePanels(props: {
  api: ApiClient;
  /** Where /api lives ('' on the page's own origin), for the upload, which does not go through the client. */
  apiBase?: string;
  activeSessionId: string | undefined;
  onOpen: (sessionId: string) => void;
}): ReactNode {
  const [shown, setShown] = useState<PanelId>('memory');
  const tabs = useRef(new Map<PanelId, HTMLButtonElement>());

  const onKeyDown = (event: KeyboardEvent) => {
    const index = PANELS.findIndex((panel) => panel.id === shown);
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (step === 0) return;
    event.preventDefault();
    const next = PANELS[(index + step + PANELS.length) % PANELS.length];
    if (next === undefined) return;
    setShown(next.id);
    tabs.current.get(next.id)?.focus();
  };

  return (
    <div className="flex flex-col">
      <div
        role="tablist"
        aria-label="Memory and knowledge"
        className="mb-2.5 flex gap-1 border-b border-line"
        onKeyDown={onKeyDown}
      >
        {PANELS.map((panel) => (
          <button
            key={panel.id}
            ref={(element) => {
              if (element === null) tabs.current.delete(panel.id);
              else tabs.current.set(panel.id, element);
            }}
            type="button"
            role="tab"
            id={`side-tab-${panel.id}`}
            aria-selected={shown === panel.id}
            aria-controls={`side-panel-${panel.id}`}
            tabIndex={shown === panel.id ? 0 : -1}
            className="rounded-t-lg px-3 py-1.5 aria-selected:font-semibold aria-selected:shadow-[inset_0_-3px_0_var(--accent)]"
            onClick={() => setShown(panel.id)}
          >
            {panel.label}
          </button>
        ))}
      </div>
      <div
        role="tabpanel"
        id={`side-panel-${shown}`}
        aria-labelledby={`side-tab-${shown}`}
        className="min-w-0"
      >
        {shown === 'memory' ? (
          <MemoryPanel api={props.api} onOpen={props.onOpen} activeSessionId={props.activeSessionId} />
        ) : (
          <KnowledgePanel api={props.api} apiBase={props.apiBase ?? ''} />
        )}
      </div>
    </div>
  );
}
