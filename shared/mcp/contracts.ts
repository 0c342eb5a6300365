// The MCP servers area's contracts: the container, the stored server (its header values sealed), the API's bodies
// and answers, and the tool list a server gives, cached on the server's item so a turn reads one item per user.
import { z } from 'zod';
import type { ContainerSpec } from '../cosmos/container-spec.js';

export const MCP_SERVERS_CONTAINER = 'mcp-servers';

export const mcpContainers: readonly ContainerSpec[] = [
  {
    id: MCP_SERVERS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    purpose:
      "The MCP servers each user added (url, sealed header values, tool filters, approval policy) with the server's " +
      "last tool list cached on the item, so a turn reads all of a user's servers in one single-partition query.",
  },
];

// --- Limits -----------------------------------------------------------------------------------------------

/** Servers one user may add. */
export const MCP_MAX_SERVERS_PER_USER = 20;
/** Tools of one server kept in its cached list (a server listing more is cut, with a note in the log). */
export const MCP_MAX_LISTED_TOOLS = 500;
/** A tool's input schema, as JSON, kept up to this many characters (a larger one is left out of the list). */
export const MCP_MAX_TOOL_SCHEMA_CHARS = 16_000;
/** A tool's description kept up to this many characters. */
export const MCP_MAX_TOOL_DESCRIPTION_CHARS = 1_000;

// --- Names and policies -----------------------------------------------------------------------------------

/** A server's name: what its tools are named after (`mcp__{name}__{tool}`), unique per user. */
export const mcpServerNameSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9_-]{0,31}$/,
    'must be 1 to 32 lowercase letters, digits, "_" or "-", starting with a letter or a digit',
  );

/**
 * When a call needs the user's yes: `always`, `never`, or `unless-read-only` (tools the server marks
 * `readOnlyHint` run at once, the others ask).
 */
export const approvalPolicySchema = z.enum(['always', 'never', 'unless-read-only']);
export type ApprovalPolicy = z.infer<typeof approvalPolicySchema>;

/** Streamable HTTP, or the older HTTP+SSE transport for a server that has only that. */
export const mcpTransportSchema = z.enum(['streamable-http', 'sse']);
export type McpTransport = z.infer<typeof mcpTransportSchema>;

const toolNameList = z.array(z.string().min(1).max(128)).max(200);

export const toolFilterSchema = z.strictObject({
  /** Only these tools (all when absent). */
  allow: toolNameList.optional(),
  /** Never these tools. */
  deny: toolNameList.optional(),
});
export type ToolFilter = z.infer<typeof toolFilterSchema>;

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
/** Header names the transport sets itself, which a server's settings may not replace. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'connection',
  'transfer-encoding',
]);

/** Header values (API keys): secrets, kept sealed and never shown again. */
export const mcpHeadersSchema = z
  .record(
    z
      .string()
      .regex(HEADER_NAME, 'must be a header name')
      .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'is set by the transport itself'),
    z
      .string()
      .min(1, 'must not be empty')
      .max(8_192)
      .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'must be a header value without control characters'),
  )
  .refine((headers) => Object.keys(headers).length <= 16, 'at most 16 headers');

const urlSchema = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2_048);

// --- The API ----------------------------------------------------------------------------------------------

export const createMcpServerBodySchema = z.strictObject({
  name: mcpServerNameSchema,
  url: urlSchema,
  transport: mcpTransportSchema.optional(),
  headers: mcpHeadersSchema.optional(),
  tools: toolFilterSchema.optional(),
  approval: approvalPolicySchema.optional(),
  enabled: z.boolean().optional(),
});
export type CreateMcpServerBody = z.infer<typeof createMcpServerBodySchema>;

/** A change: each field given replaces the stored one; `headers: null` removes every header. */
export const updateMcpServerBodySchema = z
  .strictObject({
    name: mcpServerNameSchema,
    url: urlSchema,
    transport: mcpTransportSchema,
    headers: mcpHeadersSchema.nullable(),
    tools: toolFilterSchema,
    approval: approvalPolicySchema,
    enabled: z.boolean(),
  })
  .partial();
export type UpdateMcpServerBody = z.infer<typeof updateMcpServerBodySchema>;

/** One tool as the server lists it, kept small: what the model is offered and what approvals consult. */
export const mcpToolSchema = z.object({
  name: z.string(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  /** The server marks it `readOnlyHint` (it does not change its environment). */
  readOnly: z.boolean(),
});
export type McpTool = z.infer<typeof mcpToolSchema>;

export const mcpToolListSchema = z.object({
  tools: z.array(mcpToolSchema),
  /** How many tools the server listed (more than `tools` holds when it listed too many). */
  listed: z.number().int(),
  fetchedAt: z.string(),
  expiresAt: z.string(),
});
export type McpToolList = z.infer<typeof mcpToolListSchema>;

/** A sealed header value: AES-256-GCM under the app's key (MCP_SECRETS_KEY), never in clear in Cosmos DB. */
export const sealedValueSchema = z.object({
  /** Which key sealed it (the first 8 hex digits of the key's SHA-256), so a rotated key is recognised. */
  keyId: z.string(),
  iv: z.string(),
  tag: z.string(),
  data: z.string(),
});
export type SealedValue = z.infer<typeof sealedValueSchema>;

export const mcpServerDocumentSchema = z.object({
  id: z.string(),
  kind: z.literal('mcp-server'),
  userId: z.string(),
  name: z.string(),
  url: z.string(),
  transport: mcpTransportSchema,
  headers: z.array(z.object({ name: z.string(), value: sealedValueSchema })),
  tools: toolFilterSchema,
  approval: approvalPolicySchema,
  enabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  toolList: mcpToolListSchema.optional(),
});
export type McpServerDocument = z.infer<typeof mcpServerDocumentSchema>;

/** A server as the API shows it: header names only, never their values. */
export const mcpServerViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  transport: mcpTransportSchema,
  headerNames: z.array(z.string()),
  tools: toolFilterSchema,
  approval: approvalPolicySchema,
  enabled: z.boolean(),
  /** `user`: the caller added it (they may change it); `operator`: MCP_SERVERS gives it (read-only). */
  owner: z.enum(['user', 'operator']),
  /**
   * The server asks for OAuth: `required` until the caller connects their account, then `connected` (their tokens
   * are kept sealed and refreshed). Absent for a server that has not asked.
   */
  authorization: z.enum(['required', 'connected']).optional(),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
});
export type McpServerView = z.infer<typeof mcpServerViewSchema>;

export const mcpServerListSchema = z.object({ servers: z.array(mcpServerViewSchema) });

export const mcpServerToolsSchema = z.object({
  serverId: z.string(),
  tools: z.array(
    mcpToolSchema.extend({
      /** The name the model knows it by; absent for a tool that is not offered. */
      modelName: z.string().optional(),
      /** The server's approval policy asks the user's yes before each call (and they did not say "always allow"). */
      needsApproval: z.boolean(),
      /** Offered to the model: the server's filters let it through. */
      offered: z.boolean(),
    }),
  ),
  listed: z.number().int(),
  fetchedAt: z.string(),
  expiresAt: z.string(),
});
export type McpServerTools = z.infer<typeof mcpServerToolsSchema>;

// --- OAuth ------------------------------------------------------------------------------------------------

/**
 * One user's OAuth grant for one server (theirs or the operator's), in their partition beside their servers: the
 * client registration and tokens sealed (associated data: the user and the server), the discovery state in clear,
 * and the authorization under way (its state's nonce and its PKCE verifier, sealed), single use and expiring.
 */
export const mcpOAuthDocumentSchema = z.object({
  id: z.string(),
  kind: z.literal('mcp-oauth'),
  userId: z.string(),
  serverId: z.string(),
  /** The server answered a request without a token with 401: it needs the user to connect. */
  required: z.boolean(),
  /** The redirect URL the client registration holds (a new one needs a new registration). */
  redirectUrl: z.string().optional(),
  client: sealedValueSchema.optional(),
  tokens: sealedValueSchema.optional(),
  /** When the access token expires (from `expires_in`), so it is refreshed before use. */
  tokensExpireAt: z.string().optional(),
  discovery: z.record(z.string(), z.unknown()).optional(),
  pending: z.object({ nonce: z.string(), verifier: sealedValueSchema, expiresAt: z.string() }).optional(),
  updatedAt: z.string(),
});
export type McpOAuthDocument = z.infer<typeof mcpOAuthDocumentSchema>;

/** The id of a user's grant for a server. */
export function mcpOAuthDocumentId(serverId: string): string {
  return `oauth-${serverId}`;
}

export const mcpOAuthStartSchema = z.object({
  /** Where the page sends the user to consent; the authorization server sends them back to the callback. */
  authorizationUrl: z.string(),
});

/** The page learns of a server to connect: a tool of it was called before the user connected their account. */
export const mcpConnectNeedSchema = z.object({ serverId: z.string(), serverName: z.string() });
export type McpConnectNeed = z.infer<typeof mcpConnectNeedSchema>;
