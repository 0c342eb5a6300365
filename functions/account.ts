// "Delete all my data": the caller's conversations, memory, knowledge, attachments, MCP servers, assistants,
// projects, shares and usage records, erased everywhere they live.
import { z } from 'zod';
import { eraseUser } from '../shared/app/user-eraser.js';
import { userIdSchema } from '../shared/ids.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

export const deleteUserDataEndpoint = endpoint({
  name: 'deleteUserData',
  route: 'account/users/{userId}/data',
  methods: ['DELETE'],
  summary:
    'Erases everything of the caller: each conversation as its own delete does (a running turn writes nothing back), long-term memory, knowledge documents and their chunks, attachments, MCP servers, assistants, projects, shares, usage records and quota counters. Idempotent: again, it finds nothing.',
  auth: 'caller',
  responses: { 204: 'erased' },
  usesDurableClient: true,
  params: z.object({ userId: userIdSchema }),
  async handle({ app, caller, context }) {
    const erased = await eraseUser(
      {
        database: app.account.database,
        conversations: {
          ...app.history,
          memory: app.memory,
          orchestrations: app.orchestrations(context),
          stops: app.chat.cancellations,
        },
        memory: app.memory,
        knowledge: app.knowledge,
        attachments: app.attachments.store,
      },
      caller.userId,
    );
    context.log(`Erased the data of ${caller.userId}:`, erased);
    return { status: 204 };
  },
});

export const accountFunctions: FunctionDefinition[] = [httpFunction(deleteUserDataEndpoint)];
