// POST /api/session/start's use-case: a new chat session owned by the caller, shaped as asked: its model (one the
// caller may use), memory mode, assistant and project (the caller's own or a published assistant), temporary.
import type { Caller } from '../identity/caller.js';
import type { ConversationShape } from '../conversation/conversation-shape.js';
import { DEFAULT_MEMORY_MODE, narrowerMemoryMode, type MemoryMode } from '../conversation/memory-mode.js';
import type { ChatSession, SessionStore } from '../conversation/session-store.js';
import { chooseModel, type ModelCatalogue } from '../models/model-catalogue.js';

export interface SessionRequest {
  model?: string | undefined;
  memory?: MemoryMode | undefined;
  assistantId?: string | undefined;
  projectId?: string | undefined;
  temporary?: boolean | undefined;
}

export interface StartSessionServices {
  sessions: SessionStore;
  models: ModelCatalogue;
  /**
   * Resolves what the session names beyond its model: the assistant (at its current version, and its model when
   * the request names none) and the project; each refuses what the caller may not use. Absent: only the model.
   */
  resolve?: (caller: Caller, request: SessionRequest) => Promise<ConversationShape>;
}

export async function startSession(
  services: StartSessionServices,
  caller: Caller,
  request: SessionRequest = {},
): Promise<ChatSession> {
  const resolved = services.resolve === undefined ? {} : await services.resolve(caller, request);
  const model = chooseModel(services.models, caller, request.model, resolved.model);
  const temporary = request.temporary === true;
  // The narrowest of what the request asks and what the assistant allows; a temporary chat's memory is off.
  const memory = temporary
    ? 'off'
    : narrowerMemoryMode(request.memory ?? DEFAULT_MEMORY_MODE, resolved.memory ?? DEFAULT_MEMORY_MODE);
  const shape: ConversationShape = {
    ...resolved,
    // Written even when it is the default: the conversation keeps its model when the catalogue's default changes.
    model,
    ...(memory !== DEFAULT_MEMORY_MODE ? { memory } : { memory: undefined }),
    ...(temporary ? { temporary: true } : {}),
  };
  return services.sessions.create(caller.userId, shape);
}
