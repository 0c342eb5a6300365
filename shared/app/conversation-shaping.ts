// What shapes a conversation at its start, composed from the app: the model catalogue, and the assistant (at its
// current version, which the session records) and project a session may name, each refused when the caller may not
// use it.
import { getAssistant } from '../assistants/assistants.js';
import type { StartSessionServices } from '../chat/start-session.js';
import type { ConversationShape } from '../conversation/conversation-shape.js';
import { getProject } from '../projects/projects.js';
import type { App } from './app.js';

export function sessionStarter(app: App): StartSessionServices {
  const { assistants, projects } = app.workspace;
  return {
    sessions: app.chat.sessions,
    models: app.config.models,
    async resolve(caller, request) {
      const [assistant, project] = await Promise.all([
        request.assistantId === undefined ? undefined : getAssistant(assistants, caller, request.assistantId),
        request.projectId === undefined ? undefined : getProject(projects, caller, request.projectId),
      ]);
      const shape: ConversationShape = {};
      if (assistant !== undefined) {
        shape.assistant = {
          assistantId: assistant.assistantId,
          version: assistant.version,
          // Kept with the version it was read at: the conversation's memory stays where it started.
          ...(assistant.memory === 'assistant' ? { ownMemory: true as const } : {}),
        };
        if (assistant.model !== undefined) shape.model = assistant.model;
        // An assistant without memory keeps its conversations out of it.
        if (assistant.memory === 'none') shape.memory = 'off';
      }
      if (project !== undefined) shape.projectId = project.projectId;
      return shape;
    },
  };
}
