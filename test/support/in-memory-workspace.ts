// In-memory assistants and projects for tests that call handlers in-process.
import type { AssistantStore } from '../../shared/assistants/assistant-store.js';
import type { Assistant } from '../../shared/assistants/contracts.js';
import type { Project } from '../../shared/projects/contracts.js';
import type { ProjectStore } from '../../shared/projects/project-store.js';

export class MemoryAssistants implements AssistantStore {
  readonly versions = new Map<string, Assistant>();
  readonly heads = new Map<string, Assistant>();
  putVersion(assistant: Assistant) {
    const key = `${assistant.assistantId}/${assistant.version}`;
    if (this.versions.has(key)) return Promise.resolve(false);
    this.versions.set(key, assistant);
    this.heads.set(assistant.assistantId, assistant);
    return Promise.resolve(true);
  }
  head(assistantId: string) {
    return Promise.resolve(this.heads.get(assistantId));
  }
  version(assistantId: string, version: number) {
    return Promise.resolve(this.versions.get(`${assistantId}/${version}`));
  }
  visibleTo(userId: string) {
    return Promise.resolve(
      [...this.heads.values()].filter((a) => a.ownerId === userId || a.visibility === 'public'),
    );
  }
  remove(assistantId: string) {
    this.heads.delete(assistantId);
    for (const key of [...this.versions.keys()])
      if (key.startsWith(`${assistantId}/`)) this.versions.delete(key);
    return Promise.resolve();
  }
  ownedBy(userId: string) {
    return Promise.resolve(
      [...this.heads.values()].filter((a) => a.ownerId === userId).map((a) => a.assistantId),
    );
  }
}

export class MemoryProjects implements ProjectStore {
  readonly projects = new Map<string, Project>();
  put(project: Project) {
    this.projects.set(`${project.userId}/${project.projectId}`, project);
    return Promise.resolve();
  }
  find(userId: string, projectId: string) {
    return Promise.resolve(this.projects.get(`${userId}/${projectId}`));
  }
  list(userId: string) {
    return Promise.resolve([...this.projects.values()].filter((p) => p.userId === userId));
  }
  remove(userId: string, projectId: string) {
    this.projects.delete(`${userId}/${projectId}`);
    return Promise.resolve();
  }
  removeAll(userId: string) {
    const mine = [...this.projects.keys()].filter((key) => key.startsWith(`${userId}/`));
    for (const key of mine) this.projects.delete(key);
    return Promise.resolve(mine.length);
  }
}
