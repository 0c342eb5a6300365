// PUT /api/history/conversations/{sessionId}/project's use-case: files one of the caller's conversations in one of
// their projects, or in none; the session (which later turns read) and the list's header both say so.
import { ConflictError, NotFoundError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import type { SessionStore } from '../conversation/session-store.js';
import type { ConversationHeaders } from '../history/conversation-headers.js';
import { getProject, type ProjectServices } from './projects.js';

export interface FileConversationServices extends ProjectServices {
  sessions: Pick<SessionStore, 'find' | 'setProject'>;
  headers: Pick<ConversationHeaders, 'setProject'>;
}

export async function fileConversation(
  services: FileConversationServices,
  caller: Caller,
  sessionId: string,
  projectId: string | null,
): Promise<{ sessionId: string; projectId: string | null }> {
  const session = await services.sessions.find(caller.userId, sessionId);
  if (session === undefined) throw new NotFoundError(`No conversation '${sessionId}' for this user.`);
  if (session.temporary === true)
    throw new ConflictError(
      'A temporary chat is kept in no project: start a conversation in the project instead.',
    );
  if (projectId !== null) await getProject(services, caller, projectId);
  if (!(await services.sessions.setProject(caller.userId, sessionId, projectId)))
    throw new NotFoundError(`No conversation '${sessionId}' for this user.`);
  // A conversation with no turn yet has no header: its first commit makes one in the session's project.
  await services.headers.setProject(caller.userId, sessionId, projectId);
  return { sessionId, projectId };
}
