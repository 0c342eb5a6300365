// What the page reads and changes of the caller's workspace: the model catalogue, assistants and projects, as the
// API returns them (GET /api/models, /api/assistants, /api/projects).
import type { ApiClient } from '../api/client';

export interface ModelChoice {
  id: string;
  label?: string;
  default: boolean;
}

export interface AssistantView {
  assistantId: string;
  version: number;
  name: string;
  description: string;
  instructions: string;
  model?: string;
  memory: 'user' | 'assistant' | 'none';
  starters: string[];
  visibility: 'private' | 'public';
  ownedByYou: boolean;
}

/** The fields the assistants manager edits. */
export type AssistantFields = Pick<
  AssistantView,
  'name' | 'description' | 'instructions' | 'memory' | 'starters' | 'visibility'
> & { model?: string };

export interface ProjectView {
  projectId: string;
  name: string;
  instructions: string;
}

/** What a new chat is started with (POST /api/session/start). */
export interface SessionStart {
  model?: string;
  assistantId?: string;
  projectId?: string;
  temporary?: boolean;
}

export async function listModels(api: ApiClient): Promise<ModelChoice[]> {
  return (await api.json<{ models: ModelChoice[] }>('GET', '/api/models')).models;
}

export async function listAssistants(api: ApiClient): Promise<AssistantView[]> {
  return (await api.json<{ assistants: AssistantView[] }>('GET', '/api/assistants')).assistants;
}

export function saveAssistant(
  api: ApiClient,
  fields: AssistantFields,
  assistantId?: string,
): Promise<AssistantView> {
  return assistantId === undefined
    ? api.json<AssistantView>('POST', '/api/assistants', fields)
    : api.json<AssistantView>('PATCH', `/api/assistants/${encodeURIComponent(assistantId)}`, fields);
}

export async function deleteAssistant(api: ApiClient, assistantId: string): Promise<void> {
  await api.json('DELETE', `/api/assistants/${encodeURIComponent(assistantId)}`);
}

export async function listProjects(api: ApiClient): Promise<ProjectView[]> {
  return (await api.json<{ projects: ProjectView[] }>('GET', '/api/projects')).projects;
}

export function createProject(api: ApiClient, name: string): Promise<ProjectView> {
  return api.json<ProjectView>('POST', '/api/projects', { name });
}

export function renameProject(api: ApiClient, projectId: string, name: string): Promise<ProjectView> {
  return api.json<ProjectView>('PATCH', `/api/projects/${encodeURIComponent(projectId)}`, { name });
}

/** Deletes a project; its conversations stay, in no project. */
export async function deleteProject(api: ApiClient, projectId: string): Promise<void> {
  await api.json('DELETE', `/api/projects/${encodeURIComponent(projectId)}?conversations=unfile`);
}

/** Files a conversation in a project, or (null) takes it out. */
export async function fileConversation(
  api: ApiClient,
  sessionId: string,
  projectId: string | null,
): Promise<void> {
  await api.json('PUT', `/api/history/conversations/${encodeURIComponent(sessionId)}/project`, { projectId });
}
