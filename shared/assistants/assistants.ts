// The assistants API's use-cases: an owner creates, edits (each edit a new version) and deletes their assistants;
// everyone reads the public ones; a session started with one records its id and version.
import { randomUUID } from 'node:crypto';
import { ConflictError, ForbiddenError, NotFoundError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { chooseModel, type ModelCatalogue } from '../models/model-catalogue.js';
import type { AssistantStore } from './assistant-store.js';
import type { Assistant, CreateAssistantBody, UpdateAssistantBody } from './contracts.js';
import type { PublishPolicy } from './settings.js';

export interface AssistantServices {
  store: AssistantStore;
  models: ModelCatalogue;
  publishers: PublishPolicy;
  now?: () => Date;
}

export type AssistantView = Assistant & { ownedByYou: boolean };

const view = (assistant: Assistant, caller: Caller): AssistantView => ({
  ...assistant,
  ownedByYou: assistant.ownerId === caller.userId,
});

function mayPublish(policy: PublishPolicy, caller: Caller): boolean {
  return (
    policy.everyone ||
    policy.users.includes(caller.userId) ||
    (caller.groups ?? []).some((group) => policy.groups.includes(group))
  );
}

function checkPublish(services: AssistantServices, caller: Caller, visibility: Assistant['visibility']) {
  if (visibility === 'public' && !mayPublish(services.publishers, caller))
    throw new ForbiddenError(
      'Only the users ASSISTANTS_PUBLISHERS names may make an assistant public: keep it "private".',
    );
}

const unknownAssistant = (assistantId: string) =>
  new NotFoundError(`No assistant '${assistantId}' that this caller can see.`);

export async function createAssistant(
  services: AssistantServices,
  caller: Caller,
  body: CreateAssistantBody,
): Promise<AssistantView> {
  checkPublish(services, caller, body.visibility);
  if (body.model !== undefined) chooseModel(services.models, caller, body.model);
  const at = (services.now?.() ?? new Date()).toISOString();
  const assistant: Assistant = {
    assistantId: `asst-${randomUUID().replaceAll('-', '')}`,
    ownerId: caller.userId,
    version: 1,
    name: body.name,
    description: body.description,
    instructions: body.instructions,
    ...(body.model !== undefined ? { model: body.model } : {}),
    ...(body.tools !== undefined ? { tools: body.tools } : {}),
    ...(body.knowledge !== undefined ? { knowledge: body.knowledge } : {}),
    memory: body.memory,
    starters: body.starters,
    visibility: body.visibility,
    createdAt: at,
    updatedAt: at,
  };
  await services.store.putVersion(assistant);
  return view(assistant, caller);
}

/** The assistant as the caller may see it: their own, or a public one; another's private one is not found. */
export async function getAssistant(
  services: Pick<AssistantServices, 'store'>,
  caller: Caller,
  assistantId: string,
): Promise<AssistantView> {
  const assistant = await services.store.head(assistantId);
  if (assistant === undefined || (assistant.ownerId !== caller.userId && assistant.visibility !== 'public'))
    throw unknownAssistant(assistantId);
  return view(assistant, caller);
}

export async function listAssistants(
  services: Pick<AssistantServices, 'store'>,
  caller: Caller,
): Promise<AssistantView[]> {
  const assistants = await services.store.visibleTo(caller.userId);
  return assistants
    .map((assistant) => view(assistant, caller))
    .sort((a, b) => Number(b.ownedByYou) - Number(a.ownedByYou) || a.name.localeCompare(b.name));
}

/** The owner's own assistant; another's is not found (private) or refused (public). */
async function owned(services: Pick<AssistantServices, 'store'>, caller: Caller, assistantId: string) {
  const assistant = await getAssistant(services, caller, assistantId);
  if (!assistant.ownedByYou) throw new ForbiddenError('Only its owner may change or delete an assistant.');
  return assistant;
}

/** An edit is a new version: conversations started on an earlier one keep what it said. */
export async function updateAssistant(
  services: AssistantServices,
  caller: Caller,
  assistantId: string,
  changes: UpdateAssistantBody,
): Promise<AssistantView> {
  const current = await owned(services, caller, assistantId);
  if (changes.visibility !== undefined) checkPublish(services, caller, changes.visibility);
  if (changes.model !== undefined && changes.model !== null)
    chooseModel(services.models, caller, changes.model);
  const { ownedByYou: _ownedByYou, model, tools, knowledge, ...rest } = current;
  const next: Assistant = {
    ...rest,
    ...(changes.name !== undefined ? { name: changes.name } : {}),
    ...(changes.description !== undefined ? { description: changes.description } : {}),
    ...(changes.instructions !== undefined ? { instructions: changes.instructions } : {}),
    ...(changes.memory !== undefined ? { memory: changes.memory } : {}),
    ...(changes.starters !== undefined ? { starters: changes.starters } : {}),
    ...(changes.visibility !== undefined ? { visibility: changes.visibility } : {}),
    ...optional('model', changes.model === undefined ? model : (changes.model ?? undefined)),
    ...optional('tools', changes.tools === undefined ? tools : (changes.tools ?? undefined)),
    ...optional('knowledge', changes.knowledge === undefined ? knowledge : (changes.knowledge ?? undefined)),
    version: current.version + 1,
    updatedAt: (services.now?.() ?? new Date()).toISOString(),
  };
  if (!(await services.store.putVersion(next)))
    throw new ConflictError('The assistant was changed meanwhile: read it again and repeat the change.');
  return view(next, caller);
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

export async function deleteAssistant(
  services: Pick<AssistantServices, 'store'>,
  caller: Caller,
  assistantId: string,
): Promise<void> {
  await owned(services, caller, assistantId);
  await services.store.remove(assistantId);
}
