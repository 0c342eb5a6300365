// What a chat was given over its composer, and the session start they make: a temporary chat is filed in no project
// (it is in no list to file).
import type { AssistantView, SessionStart } from './workspace-api';

/** What the user chose for the chat: undefined fields are the conversation's (or the catalogue's) own. */
export interface ChatChoices {
  model?: string;
  assistant?: AssistantView;
  temporary: boolean;
}

/** The body of POST /api/session/start for these choices. */
export function sessionStartOf(choices: ChatChoices, projectId: string | undefined): SessionStart {
  return {
    ...(choices.model === undefined ? {} : { model: choices.model }),
    ...(choices.assistant === undefined ? {} : { assistantId: choices.assistant.assistantId }),
    ...(choices.temporary ? { temporary: true } : {}),
    ...(projectId === undefined || choices.temporary ? {} : { projectId }),
  };
}
