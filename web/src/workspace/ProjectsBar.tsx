// The sidebar's projects: a filter for the conversation list, creating, renaming and deleting a project, and
// filing the open conversation in one (or taking it out).
import { FolderPlus, Pencil, Trash2 } from 'lucide-react';
import { useCallback, useEffect, useId, useState } from 'react';
import type { ReactNode } from 'react';
import { describeError } from '../api/client';
import { turnEnded } from '../chat/turn-ends';
import type { ApiClient } from '../api/client';
import { createProject, deleteProject, fileConversation, listProjects, renameProject } from './workspace-api';
import type { ProjectView } from './workspace-api';

type Editing = { kind: 'create' } | { kind: 'rename'; project: ProjectView } | undefined;

export function ProjectsBar(props: {
  api: ApiClient;
  /** The filter: undefined lists every conversation. */
  projectId: string | undefined;
  onProjectId: (projectId: string | undefined) => void;
  activeSessionId: string | undefined;
}): ReactNode {
  const { api, projectId, onProjectId, activeSessionId } = props;
  const [projects, setProjects] = useState<ProjectView[]>([]);
  const [editing, setEditing] = useState<Editing>(undefined);
  const [name, setName] = useState('');
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const filterId = useId();
  const fileId = useId();
  const nameId = useId();
  const refresh = useCallback(
    () => listProjects(api).then(setProjects, (error: unknown) => setNotice(describeError(error))),
    [api],
  );
  useEffect(() => {
    void refresh();
  }, [refresh]);
  const selected = projects.find((project) => project.projectId === projectId);
  const act = (action: () => Promise<unknown>, done?: string): void => {
    setNotice(undefined);
    action().then(
      () => {
        if (done !== undefined) setNotice(done);
        void refresh();
      },
      (error: unknown) => setNotice(describeError(error)),
    );
  };
  const submit = (): void => {
    const trimmed = name.trim();
    if (trimmed === '' || editing === undefined) return;
    const current = editing;
    setEditing(undefined);
    act(async () => {
      if (current.kind === 'create') onProjectId((await createProject(api, trimmed)).projectId);
      else await renameProject(api, current.project.projectId, trimmed);
    });
  };
  return (
    <div className="mb-2 flex flex-col gap-1.5 border-b border-line pb-2 text-sm">
      <div className="flex min-w-0 items-center gap-1">
        <label htmlFor={filterId} className="shrink-0">
          Project
        </label>
        <select
          id={filterId}
          className="min-w-0 flex-1 truncate"
          value={projectId ?? ''}
          onChange={(event) => onProjectId(event.target.value === '' ? undefined : event.target.value)}
        >
          <option value="">All conversations</option>
          {projects.map((project) => (
            <option key={project.projectId} value={project.projectId}>
              {project.name}
            </option>
          ))}
        </select>
        <button
          type="button"
          className="btn btn-quiet btn-icon"
          aria-label="New project"
          title="New project"
          onClick={() => {
            setName('');
            setEditing({ kind: 'create' });
          }}
        >
          <FolderPlus size={16} aria-hidden />
        </button>
        {selected === undefined ? null : (
          <>
            <button
              type="button"
              className="btn btn-quiet btn-icon"
              aria-label={`Rename ${selected.name}`}
              title="Rename project"
              onClick={() => {
                setName(selected.name);
                setEditing({ kind: 'rename', project: selected });
              }}
            >
              <Pencil size={16} aria-hidden />
            </button>
            <button
              type="button"
              className="btn btn-quiet btn-icon"
              aria-label={`Delete ${selected.name}`}
              title="Delete project (its conversations stay)"
              onClick={() =>
                act(async () => {
                  await deleteProject(api, selected.projectId);
                  onProjectId(undefined);
                }, `${selected.name} was deleted; its conversations are in no project.`)
              }
            >
              <Trash2 size={16} aria-hidden />
            </button>
          </>
        )}
      </div>
      {editing === undefined ? null : (
        <form
          className="flex min-w-0 items-center gap-1"
          aria-label={editing.kind === 'create' ? 'New project' : 'Rename project'}
          onSubmit={(event) => {
            event.preventDefault();
            submit();
          }}
        >
          <label htmlFor={nameId} className="sr-only">
            Project name
          </label>
          <input
            id={nameId}
            className="min-w-0 flex-1"
            value={name}
            maxLength={200}
            placeholder="Project name"
            onChange={(event) => setName(event.target.value)}
          />
          <button type="submit" className="btn btn-primary">
            {editing.kind === 'create' ? 'Create' : 'Rename'}
          </button>
          <button type="button" className="btn btn-quiet" onClick={() => setEditing(undefined)}>
            Cancel
          </button>
        </form>
      )}
      {activeSessionId === undefined || projects.length === 0 ? null : (
        <div className="flex min-w-0 items-center gap-1">
          <label htmlFor={fileId} className="shrink-0">
            Move this chat to
          </label>
          <select
            id={fileId}
            className="min-w-0 flex-1 truncate"
            value=""
            onChange={(event) => {
              const target = event.target.value;
              if (target === '') return;
              const to = target === 'none' ? null : target;
              const label = projects.find((project) => project.projectId === to)?.name;
              act(
                async () => {
                  await fileConversation(api, activeSessionId, to);
                  // The list is asked again, as after a turn: the conversation left or joined the filter.
                  turnEnded(activeSessionId);
                },
                label === undefined ? 'Taken out of its project.' : `Filed in ${label}.`,
              );
            }}
          >
            <option value="">Choose a project…</option>
            {projects.map((project) => (
              <option key={project.projectId} value={project.projectId}>
                {project.name}
              </option>
            ))}
            <option value="none">No project</option>
          </select>
        </div>
      )}
      {notice === undefined ? null : (
        <p className="muted m-0" role="status">
          {notice}
        </p>
      )}
    </div>
  );
}
