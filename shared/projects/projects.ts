// The projects API's use-cases: a user's projects, each with instructions and knowledge for the conversations filed
// in it; a project is reached only by its owner (another's is not found).
import { randomUUID } from 'node:crypto';
import { NotFoundError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import type { CreateProjectBody, Project, UpdateProjectBody } from './contracts.js';
import type { ProjectStore } from './project-store.js';

export interface ProjectServices {
  store: ProjectStore;
  now?: () => Date;
}

export async function createProject(
  services: ProjectServices,
  caller: Caller,
  body: CreateProjectBody,
): Promise<Project> {
  const at = (services.now?.() ?? new Date()).toISOString();
  const project: Project = {
    projectId: `proj-${randomUUID().replaceAll('-', '')}`,
    userId: caller.userId,
    name: body.name,
    instructions: body.instructions,
    ...(body.knowledge !== undefined ? { knowledge: body.knowledge } : {}),
    createdAt: at,
    updatedAt: at,
  };
  await services.store.put(project);
  return project;
}

export async function getProject(
  services: ProjectServices,
  caller: Caller,
  projectId: string,
): Promise<Project> {
  const project = await services.store.find(caller.userId, projectId);
  if (project === undefined) throw new NotFoundError(`No project '${projectId}' for this user.`);
  return project;
}

export function listProjects(services: ProjectServices, caller: Caller): Promise<Project[]> {
  return services.store.list(caller.userId);
}

export async function updateProject(
  services: ProjectServices,
  caller: Caller,
  projectId: string,
  changes: UpdateProjectBody,
): Promise<Project> {
  const { knowledge, ...current } = await getProject(services, caller, projectId);
  const kept = changes.knowledge === undefined ? knowledge : (changes.knowledge ?? undefined);
  const next: Project = {
    ...current,
    ...(changes.name !== undefined ? { name: changes.name } : {}),
    ...(changes.instructions !== undefined ? { instructions: changes.instructions } : {}),
    ...(kept !== undefined ? { knowledge: kept } : {}),
    updatedAt: (services.now?.() ?? new Date()).toISOString(),
  };
  await services.store.put(next);
  return next;
}

/**
 * Deletes the caller's project. Its conversations stay, unfiled: their sessions still name it, and a project that is
 * gone shapes nothing (its instructions were part of each conversation's first prompt already).
 */
export async function deleteProject(
  services: ProjectServices,
  caller: Caller,
  projectId: string,
): Promise<void> {
  await getProject(services, caller, projectId);
  await services.store.remove(caller.userId, projectId);
}
