// What shapes conversations beyond the chat itself, composed over Cosmos DB: assistants and projects.
import type { Database } from '@azure/cosmos';
import type { AssistantServices } from '../assistants/assistants.js';
import { createCosmosAssistantStore } from '../assistants/adapters/cosmos-assistant-store.js';
import { ASSISTANTS_CONTAINER } from '../assistants/contracts.js';
import { createCosmosProjectStore } from '../projects/adapters/cosmos-project-store.js';
import { PROJECTS_CONTAINER } from '../projects/contracts.js';
import type { ProjectServices } from '../projects/projects.js';
import type { ConversationInstructions } from '../conversation/conversation-shape.js';
import type { AppConfig } from './config.js';
import { getAssistant } from '../assistants/assistants.js';
import { getProject } from '../projects/projects.js';
import { scopeTarget } from '../conversation/memory-scope.js';
import type { ScopeAccess } from '../memory/memory-scopes.js';

export interface WorkspaceServices {
  assistants: AssistantServices;
  projects: ProjectServices;
}

export function composeWorkspace(database: Database, config: AppConfig): WorkspaceServices {
  return {
    assistants: {
      store: createCosmosAssistantStore(database.container(ASSISTANTS_CONTAINER)),
      models: config.models,
      publishers: config.assistants.publishers,
    },
    projects: { store: createCosmosProjectStore(database.container(PROJECTS_CONTAINER)) },
  };
}

/**
 * The instructions a conversation opens with (its assistant's at its version, then its project's) and the documents
 * its knowledge search reads (both's), and the built-in tools its assistant names.
 */
export function conversationInstructions(workspace: WorkspaceServices): ConversationInstructions {
  return async (userId, shape) => {
    const [assistant, project] = await Promise.all([
      shape.assistant === undefined
        ? undefined
        : workspace.assistants.store.version(shape.assistant.assistantId, shape.assistant.version),
      shape.projectId === undefined ? undefined : workspace.projects.store.find(userId, shape.projectId),
    ]);
    const parts = [
      assistant && assistant.instructions.trim() !== ''
        ? `Instructions of the assistant "${assistant.name}":\n${assistant.instructions.trim()}`
        : undefined,
      project && project.instructions.trim() !== ''
        ? `Instructions of the project "${project.name}":\n${project.instructions.trim()}`
        : undefined,
    ].filter((part) => part !== undefined);
    const documentIds = [
      ...new Set([...(assistant?.knowledge?.documentIds ?? []), ...(project?.knowledge?.documentIds ?? [])]),
    ];
    return {
      instructions: parts.length === 0 ? undefined : parts.join('\n\n'),
      documentIds: documentIds.length === 0 ? undefined : documentIds,
      tools: assistant?.tools === undefined ? undefined : [...assistant.tools],
    };
  };
}

/**
 * Whether a memory scope is the caller's to put memory in: their own project, an assistant they may use (their own or
 * a published one, whose conversations with them keep its memory in their partition). Refused as not found otherwise.
 */
export function memoryScopeAccess(workspace: WorkspaceServices): ScopeAccess {
  return async (caller, scope) => {
    const target = scopeTarget(scope);
    if (target.kind === 'assistant') await getAssistant(workspace.assistants, caller, target.assistantId);
    else if (target.kind === 'project') await getProject(workspace.projects, caller, target.projectId);
  };
}
