// The model ids of the OpenAI-compatible API: the catalogue's models the caller may use, and the assistants they
// can see as `assistant:<assistantId>`. An id that is neither is OpenAI's 404 `model_not_found`.
import { AppError, NotFoundError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { isId } from '../ids.js';
import { getAssistant, listAssistants } from '../assistants/assistants.js';
import type { AssistantStore } from '../assistants/assistant-store.js';
import { mayUse, modelsFor, type ModelCatalogue } from '../models/model-catalogue.js';
import { ASSISTANT_MODEL_PREFIX, type OpenAiModel } from './contracts.js';

export class ModelNotFoundError extends AppError {
  constructor(model: string) {
    super(
      'model_not_found',
      `The model '${model}' does not exist or you do not have access to it: GET /api/v1/models lists the ids you may use.`,
      404,
    );
  }
}

export interface ModelIdServices {
  models: ModelCatalogue;
  assistants: AssistantStore;
}

/** What a model id chooses: a catalogue model, or an assistant (whose own model the conversation then runs on). */
export type ModelChoice = { kind: 'model'; model: string } | { kind: 'assistant'; assistantId: string };

/** The catalogue's models the caller may use (the default first), then the assistants they can see. */
export async function listModelIds(services: ModelIdServices, caller: Caller): Promise<OpenAiModel[]> {
  const catalogue = modelsFor(services.models, caller).map((entry): OpenAiModel => ({
    id: entry.id,
    object: 'model',
    created: 0,
    owned_by: 'system',
  }));
  const assistants = await listAssistants({ store: services.assistants }, caller);
  return [
    ...catalogue,
    ...assistants.map((assistant): OpenAiModel => ({
      id: `${ASSISTANT_MODEL_PREFIX}${assistant.assistantId}`,
      object: 'model',
      created: Math.floor(Date.parse(assistant.createdAt) / 1000),
      owned_by: assistant.ownedByYou ? 'you' : 'shared',
    })),
  ];
}

/** The model or assistant an id names, among those the caller may use; anything else is model_not_found. */
export async function resolveModelId(
  services: ModelIdServices,
  caller: Caller,
  id: string,
): Promise<ModelChoice> {
  if (id.startsWith(ASSISTANT_MODEL_PREFIX)) {
    const assistantId = id.slice(ASSISTANT_MODEL_PREFIX.length);
    if (!isId('assistantId', assistantId)) throw new ModelNotFoundError(id);
    try {
      await getAssistant({ store: services.assistants }, caller, assistantId);
    } catch (error) {
      if (error instanceof NotFoundError) throw new ModelNotFoundError(id);
      throw error;
    }
    return { kind: 'assistant', assistantId };
  }
  const entry = services.models.models.find((candidate) => candidate.id === id);
  if (entry === undefined || !mayUse(entry, caller)) throw new ModelNotFoundError(id);
  return { kind: 'model', model: entry.id };
}
