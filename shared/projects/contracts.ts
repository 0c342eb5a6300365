// Projects' contracts: the container, the stored project, and the bodies of the projects API.
import { z } from 'zod';
import type { ContainerSpec } from '../cosmos/container-spec.js';
import { projectIdSchema, userIdSchema } from '../ids.js';

export const PROJECTS_CONTAINER = 'projects';

export const projectsContainers: readonly ContainerSpec[] = [
  {
    id: PROJECTS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    defaultTtlSeconds: -1,
    purpose:
      "Projects, in their owner's partition: name, instructions and knowledge that the conversations filed in them get.",
  },
];

const text = (max: number) =>
  z.string({ error: 'must be a string' }).max(max, `must be at most ${max} characters`);
const name = text(100).refine((value) => value.trim() !== '', 'must not be empty');
const knowledge = z.object({
  documentIds: z.array(z.string().regex(/^[0-9a-f]{32}$/, 'must be a documentId')).max(100),
});

export const createProjectBodySchema = z.object(
  { name, instructions: text(20_000).default(''), knowledge: knowledge.optional() },
  { error: 'the body must be a JSON object' },
);
export type CreateProjectBody = z.infer<typeof createProjectBodySchema>;

export const updateProjectBodySchema = z
  .object(
    {
      name: name.optional(),
      instructions: text(20_000).optional(),
      knowledge: knowledge.nullable().optional(),
    },
    { error: 'the body must be a JSON object' },
  )
  .refine((body) => Object.values(body).some((value) => value !== undefined), 'names nothing to change');
export type UpdateProjectBody = z.infer<typeof updateProjectBodySchema>;

export const projectSchema = z.object({
  projectId: projectIdSchema,
  userId: userIdSchema,
  name: z.string(),
  instructions: z.string(),
  knowledge: knowledge.optional(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type Project = z.infer<typeof projectSchema>;

export const projectDocumentSchema = projectSchema.extend({ id: z.string(), kind: z.literal('project') });

export const projectListSchema = z.object({ projects: z.array(projectSchema) });
export const projectParamsSchema = z.object({ projectId: projectIdSchema });

/** What DELETE /api/projects/{id} does with the project's conversations: keep them unfiled, or delete them. */
export const PROJECT_CONVERSATIONS = ['unfile'] as const;
export const deleteProjectQuerySchema = z.object({
  conversations: z.enum(PROJECT_CONVERSATIONS, {
    error: 'must say what becomes of its conversations: "unfile" (they stay, in no project)',
  }),
});
