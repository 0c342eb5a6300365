// Where a remembered fact lives (the shared memory, an assistant's own, a project's), and a select that moves it
// to another of the caller's scopes (PATCH /api/memory/users/{userId}/memories/{factId}).
import { useEffect, useState } from 'react';
import type { ReactNode } from 'react';
import type { ApiClient } from '../api/client';
import { listAssistants, listProjects } from '../workspace/workspace-api';

export interface ScopeOption {
  scope: string;
  label: string;
}

const SHARED: ScopeOption = { scope: 'user', label: 'Shared memory (every chat)' };

/** The scopes a fact can move to: the shared memory, the caller's projects, assistants with their own memory. */
export function useScopeOptions(api: ApiClient, reloads: number): ScopeOption[] {
  const [options, setOptions] = useState<ScopeOption[]>([SHARED]);
  useEffect(() => {
    let live = true;
    Promise.all([listProjects(api), listAssistants(api)]).then(
      ([projects, assistants]) => {
        if (!live) return;
        setOptions([
          SHARED,
          ...projects.map((project) => ({
            scope: `project:${project.projectId}`,
            label: `Project: ${project.name}`,
          })),
          ...assistants
            .filter((assistant) => assistant.memory === 'assistant')
            .map((assistant) => ({
              scope: `assistant:${assistant.assistantId}`,
              label: `Assistant: ${assistant.name}`,
            })),
        ]);
      },
      // Without the lists the select still shows where each fact lives and offers the shared memory.
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [api, reloads]);
  return options;
}

/** How a scope reads on the page, named when it is one of the options. */
export function scopeLabel(scope: string | undefined, options: readonly ScopeOption[]): string {
  const value = scope ?? 'user';
  const known = options.find((option) => option.scope === value);
  if (known !== undefined) return known.label;
  if (value.startsWith('project:')) return 'A project (deleted?)';
  if (value.startsWith('assistant:')) return 'An assistant (no longer yours?)';
  return SHARED.label;
}

export function FactScopeSelect(props: {
  factId: string;
  statement: string;
  scope: string | undefined;
  options: readonly ScopeOption[];
  disabled: boolean;
  onMove: (scope: string, label: string) => void;
}): ReactNode {
  const { factId, statement, options, disabled, onMove } = props;
  const current = props.scope ?? 'user';
  const shown = options.some((option) => option.scope === current)
    ? options
    : [...options, { scope: current, label: scopeLabel(current, options) }];
  const id = `fact-scope-${factId}`;
  return (
    <span className="inline-flex items-center gap-1.5">
      <label htmlFor={id}>Lives in</label>
      <select
        id={id}
        className="min-w-0 max-w-full truncate"
        value={current}
        disabled={disabled}
        aria-label={`Where "${statement}" lives`}
        onChange={(event) => {
          const scope = event.target.value;
          if (scope !== current) onMove(scope, scopeLabel(scope, shown));
        }}
      >
        {shown.map((option) => (
          <option key={option.scope} value={option.scope}>
            {option.label}
          </option>
        ))}
      </select>
    </span>
  );
}
