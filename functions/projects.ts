// The projects API: the caller's projects, each reached by its owner only (another's is not found).
import {
  createProjectBodySchema,
  deleteProjectQuerySchema,
  projectListSchema,
  projectParamsSchema,
  projectSchema,
  updateProjectBodySchema,
} from '../shared/projects/contracts.js';
import {
  createProject,
  deleteProject,
  getProject,
  listProjects,
  updateProject,
} from '../shared/projects/projects.js';
import { z } from 'zod';
import { projectIdSchema, sessionIdSchema } from '../shared/ids.js';
import { fileConversation } from '../shared/projects/file-conversation.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

const NOT_FOUND = "an unknown project, or another user's (the same answer)";
const BODY_BYTES = 64 * 1024;

export const createProjectEndpoint = endpoint({
  name: 'createProject',
  route: 'projects',
  methods: ['POST'],
  summary: 'A new project of the caller: name, instructions, knowledge (201).',
  auth: 'caller',
  responses: { 201: 'the project' },
  replies: { 201: projectSchema },
  body: { schema: createProjectBodySchema, maxBytes: BODY_BYTES, what: 'project' },
  async handle({ app, caller, body }) {
    return { status: 201, body: await createProject(app.workspace.projects, caller, body) };
  },
});

export const listProjectsEndpoint = endpoint({
  name: 'listProjects',
  route: 'projects',
  methods: ['GET'],
  summary: "The caller's projects, by name.",
  auth: 'caller',
  responses: { 200: '{projects: [...]}' },
  replies: { 200: projectListSchema },
  async handle({ app, caller }) {
    return { status: 200, body: { projects: await listProjects(app.workspace.projects, caller) } };
  },
});

export const getProjectEndpoint = endpoint({
  name: 'getProject',
  route: 'projects/{projectId}',
  methods: ['GET'],
  summary: 'One of the caller’s projects.',
  auth: 'caller',
  responses: { 200: 'the project', 404: NOT_FOUND },
  replies: { 200: projectSchema },
  params: projectParamsSchema,
  async handle({ app, caller, params }) {
    return { status: 200, body: await getProject(app.workspace.projects, caller, params.projectId) };
  },
});

export const updateProjectEndpoint = endpoint({
  name: 'updateProject',
  route: 'projects/{projectId}',
  methods: ['PATCH'],
  summary: 'Changes the caller’s project (name, instructions, knowledge).',
  auth: 'caller',
  responses: { 200: 'the project as changed', 404: NOT_FOUND },
  replies: { 200: projectSchema },
  params: projectParamsSchema,
  body: { schema: updateProjectBodySchema, maxBytes: BODY_BYTES, what: 'project change' },
  async handle({ app, caller, params, body }) {
    return {
      status: 200,
      body: await updateProject(app.workspace.projects, caller, params.projectId, body),
    };
  },
});

export const deleteProjectEndpoint = endpoint({
  name: 'deleteProject',
  route: 'projects/{projectId}',
  methods: ['DELETE'],
  summary:
    'Deletes the caller’s project; `?conversations=unfile` says what becomes of its conversations: they stay, in no project.',
  auth: 'caller',
  responses: { 204: 'deleted', 404: NOT_FOUND },
  params: projectParamsSchema,
  query: deleteProjectQuerySchema,
  async handle({ app, caller, params }) {
    await deleteProject(app.workspace.projects, caller, params.projectId);
    return { status: 204 };
  },
});

const fileConversationBodySchema = z.object(
  { projectId: projectIdSchema.nullable() },
  { error: 'the body must be a JSON object: {"projectId": "<id>"} or {"projectId": null}' },
);

export const fileConversationEndpoint = endpoint({
  name: 'fileConversation',
  route: 'history/conversations/{sessionId}/project',
  methods: ['PUT'],
  summary:
    'Files one of the caller’s conversations in one of their projects ({projectId}), or in none ({projectId: null}); the list then shows it under ?projectId=.',
  auth: 'caller',
  responses: {
    200: '{sessionId, projectId}',
    404: "an unknown conversation or project, or another user's (the same answer)",
    409: 'a temporary chat, which is kept in no project',
  },
  replies: { 200: z.object({ sessionId: z.string(), projectId: z.string().nullable() }) },
  params: z.object({ sessionId: sessionIdSchema }),
  body: { schema: fileConversationBodySchema, maxBytes: 1024, what: 'project choice' },
  async handle({ app, caller, params, body }) {
    const services = { ...app.workspace.projects, sessions: app.chat.sessions, headers: app.history.headers };
    return {
      status: 200,
      body: await fileConversation(services, caller, params.sessionId, body.projectId),
    };
  },
});

export const projectFunctions: FunctionDefinition[] = [
  createProjectEndpoint,
  listProjectsEndpoint,
  getProjectEndpoint,
  updateProjectEndpoint,
  deleteProjectEndpoint,
]
  .map((declared) => httpFunction(declared))
  .concat(httpFunction(fileConversationEndpoint));
