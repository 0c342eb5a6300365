// The assistants API: the caller's own assistants and the public ones; only the owner changes or deletes one.
import {
  assistantListSchema,
  assistantParamsSchema,
  assistantViewSchema,
  createAssistantBodySchema,
  updateAssistantBodySchema,
} from '../shared/assistants/contracts.js';
import {
  createAssistant,
  deleteAssistant,
  getAssistant,
  listAssistants,
  updateAssistant,
} from '../shared/assistants/assistants.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

const NOT_FOUND = "an unknown assistant, or another user's private one (the same answer)";
const BODY_BYTES = 64 * 1024;

export const createAssistantEndpoint = endpoint({
  name: 'createAssistant',
  route: 'assistants',
  methods: ['POST'],
  summary:
    'A new assistant of the caller: name, description, instructions, model, tools, knowledge, memory (user, assistant or none), starters, visibility (201).',
  auth: 'caller',
  responses: {
    201: 'the assistant, version 1',
    403: 'a model the caller may not use, or "public" when ASSISTANTS_PUBLISHERS does not name the caller',
  },
  replies: { 201: assistantViewSchema },
  body: { schema: createAssistantBodySchema, maxBytes: BODY_BYTES, what: 'assistant' },
  async handle({ app, caller, body }) {
    return { status: 201, body: await createAssistant(app.workspace.assistants, caller, body) };
  },
});

export const listAssistantsEndpoint = endpoint({
  name: 'listAssistants',
  route: 'assistants',
  methods: ['GET'],
  summary: "The caller's assistants, then the public ones, each with ownedByYou.",
  auth: 'caller',
  responses: { 200: '{assistants: [...]}' },
  replies: { 200: assistantListSchema },
  async handle({ app, caller }) {
    return { status: 200, body: { assistants: await listAssistants(app.workspace.assistants, caller) } };
  },
});

export const getAssistantEndpoint = endpoint({
  name: 'getAssistant',
  route: 'assistants/{assistantId}',
  methods: ['GET'],
  summary: 'One assistant as it is now (its version included).',
  auth: 'caller',
  responses: { 200: 'the assistant', 404: NOT_FOUND },
  replies: { 200: assistantViewSchema },
  params: assistantParamsSchema,
  async handle({ app, caller, params }) {
    return { status: 200, body: await getAssistant(app.workspace.assistants, caller, params.assistantId) };
  },
});

export const updateAssistantEndpoint = endpoint({
  name: 'updateAssistant',
  route: 'assistants/{assistantId}',
  methods: ['PATCH'],
  summary:
    'Changes the caller’s assistant: a new version. Conversations started on an earlier version keep what it said.',
  auth: 'caller',
  responses: {
    200: 'the assistant at its new version',
    403: 'another user’s public assistant, a model the caller may not use, or publishing not allowed',
    404: NOT_FOUND,
    409: 'another change landed first: read it again',
  },
  replies: { 200: assistantViewSchema },
  params: assistantParamsSchema,
  body: { schema: updateAssistantBodySchema, maxBytes: BODY_BYTES, what: 'assistant change' },
  async handle({ app, caller, params, body }) {
    return {
      status: 200,
      body: await updateAssistant(app.workspace.assistants, caller, params.assistantId, body),
    };
  },
});

export const deleteAssistantEndpoint = endpoint({
  name: 'deleteAssistant',
  route: 'assistants/{assistantId}',
  methods: ['DELETE'],
  summary:
    'Deletes the caller’s assistant with its versions; conversations started with it keep the prompt they were given.',
  auth: 'caller',
  responses: { 204: 'deleted', 403: 'another user’s public assistant', 404: NOT_FOUND },
  params: assistantParamsSchema,
  async handle({ app, caller, params }) {
    await deleteAssistant(app.workspace.assistants, caller, params.assistantId);
    return { status: 204 };
  },
});

export const assistantFunctions: FunctionDefinition[] = [
  createAssistantEndpoint,
  listAssistantsEndpoint,
  getAssistantEndpoint,
  updateAssistantEndpoint,
  deleteAssistantEndpoint,
].map((declared) => httpFunction(declared));
