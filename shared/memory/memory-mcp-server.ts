// The memory tools over MCP, for other agents: search the user's past conversations, read their profile, forget a
// memory. One server is made per request and acts for one caller, resolved as for REST; no tool takes a user id,
// so a caller reaches only their own memories. The tools call the same use-cases as REST.
import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { sessionIdSchema } from '../ids.js';
import { AppError, ensureError } from '../errors.js';
import { SEARCH_CONVERSATION_HISTORY_TOOL, searchConversationHistoryArgsSchema } from './contracts.js';
import type { ForgetServices } from './forget-memories.js';
import { factIdSchema, forgetMemories, getUserProfile } from './memory-api.js';
import { searchConversations, type ConversationSearchServices } from './search-conversations.js';
import { scopeFilterSchema, scopesOf } from './memory-scopes.js';

const GET_USER_PROFILE_TOOL = 'get_user_profile';
const DELETE_MEMORY_TOOL = 'delete_memory';

/** Search, and the stores the profile is read from and memories are forgotten in. */
export type MemoryMcpServices = ForgetServices & { search: ConversationSearchServices };

/** Runs a search once admitted, its query's embedding counted to the caller (the usage area's meteredSearch). */
export type SearchMeter = <T>(work: () => Promise<T>) => Promise<T>;

/** What the server tells a client about itself. */
const MEMORY_MCP_SERVER_INFO = { name: 'memory-chat-backend-memory', version: '1.0.0' };

const scopeArgSchema = scopeFilterSchema.describe(
  "Only the memory of one scope: 'user' (the user's shared memory), 'assistant:<assistantId>' (an assistant's own) or 'project:<projectId>'. Absent: every scope.",
);

const searchArgsSchema = searchConversationHistoryArgsSchema.extend({ scope: scopeArgSchema });

const getUserProfileArgsSchema = z.object({
  scope: scopeArgSchema,
  include_history: z
    .boolean()
    .default(false)
    .describe(
      'Also list every fact, superseded and retracted ones too, with the messages it came from and when it was true.',
    ),
});

const deleteMemoryArgsSchema = z
  .object({
    factId: factIdSchema.optional().describe('The fact to forget, as get_user_profile shows it.'),
    sessionId: sessionIdSchema
      .optional()
      .describe(
        "A conversation to forget: its summary, and the facts that came only from it (facts also said elsewhere lose this conversation's sources).",
      ),
  })
  .refine((args) => (args.factId === undefined) !== (args.sessionId === undefined), {
    message: 'name exactly one of factId and sessionId',
  });

export function createMemoryMcpServer(
  services: MemoryMcpServices,
  userId: string,
  log: (message: string) => void,
  meter: SearchMeter,
): McpServer {
  const server = new McpServer(MEMORY_MCP_SERVER_INFO, {
    instructions:
      'Long-term memory of one user of a chat assistant: summaries of their past conversations and the facts they told it about themselves. Every tool acts for the signed-in user only.',
  });
  const run = <T extends object>(work: () => Promise<T>) => toolResult(work, log);

  server.registerTool(
    SEARCH_CONVERSATION_HISTORY_TOOL,
    {
      title: 'Search past conversations',
      description:
        "Semantic search over the user's past conversations. Each result has the conversation's summary, themes, persons, places, the user's sentiment, a relevance score, its sessionId, title and date, so an answer can cite the conversation it came from.",
      inputSchema: searchArgsSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ search_query, limit, scope }) =>
      run(async () => ({
        results: await meter(() =>
          searchConversations(services.search, userId, search_query, limit, { scopes: scopesOf(scope) }),
        ),
      })),
  );

  server.registerTool(
    GET_USER_PROFILE_TOOL,
    {
      title: "Read the user's profile",
      description:
        "What the user has said about themselves, as their profile's active facts grouped by attribute (output, personal and assistant preferences, knowledge, interests, dislikes, family and friends, work, goals), each with its factId.",
      inputSchema: getUserProfileArgsSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ include_history, scope }) =>
      run(() => getUserProfile(services.facts, userId, { includeHistory: include_history, scope })),
  );

  server.registerTool(
    DELETE_MEMORY_TOOL,
    {
      title: 'Forget a memory',
      description:
        'Forgets one fact of the profile ({factId}) or one past conversation ({sessionId}): its summary, and the facts that came only from it. It is gone from search and the profile at once.',
      inputSchema: deleteMemoryArgsSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args) => run(() => forgetMemories(services, userId, args)),
  );
  return server;
}

/**
 * A tool's answer: the value as JSON text (what a model reads) and as structured content. A refusal the product
 * words for its users (an unknown fact, a model that failed) is a tool error with that message; anything else is
 * logged and answered without internals.
 */
async function toolResult<T extends object>(
  work: () => Promise<T>,
  log: (message: string) => void,
): Promise<CallToolResult> {
  try {
    const value = await work();
    return {
      content: [{ type: 'text', text: JSON.stringify(value) }],
      structuredContent: value,
    };
  } catch (thrown) {
    if (thrown instanceof AppError) return toolError(thrown.message);
    const error = ensureError(thrown);
    log(`MCP tool failed: ${error.stack ?? error.message}`);
    return toolError('The tool failed unexpectedly; it can be retried.');
  }
}

function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}
