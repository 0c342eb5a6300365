// Settings of MCP servers: the operator's servers (MCP_SERVERS), the key that seals users' header values, the
// outbound guard's allowed hosts, and the limits of one call and of the tools one turn offers.
import { z } from 'zod';
import {
  defineSettings,
  intSetting,
  parseJsonSetting,
  textSetting,
  type SettingRow,
  type SettingValues,
} from '../settings/setting.js';
import {
  approvalPolicySchema,
  mcpHeadersSchema,
  mcpServerNameSchema,
  mcpTransportSchema,
  toolFilterSchema,
  type ApprovalPolicy,
  type McpTransport,
  type ToolFilter,
} from './contracts.js';

const EXAMPLE = '[{"name":"github","url":"https://api.githubcopilot.com/mcp/","for":["*"]}]';

const operatorServerSchema = z.strictObject({
  name: mcpServerNameSchema,
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  transport: mcpTransportSchema.optional(),
  headers: mcpHeadersSchema.optional(),
  tools: toolFilterSchema.optional(),
  approval: approvalPolicySchema.optional(),
  /** Who gets it: `*` (everyone), user ids and `group:<id>` entries. Default: everyone. */
  for: z.array(z.string().min(1)).optional(),
});

/** A server the operator gives: for everyone, or for some users and Entra ID groups. */
export interface OperatorMcpServer {
  id: string;
  name: string;
  url: string;
  transport: McpTransport;
  /** In clear: the setting itself is the secret (a Key Vault reference on Azure). */
  headers: Record<string, string>;
  tools: ToolFilter;
  approval: ApprovalPolicy;
  audience: { everyone: boolean; users: string[]; groups: string[] };
}

const serversSchema: z.ZodType<OperatorMcpServer[], string | undefined> = z
  .string()
  .optional()
  .transform((text, context) => {
    if (text === undefined) return [];
    const servers = parseJsonSetting(text, z.array(operatorServerSchema).max(50), context, {
      what: 'a list of MCP servers',
      hint: `e.g. ${EXAMPLE}`,
      example: EXAMPLE,
    });
    if (servers === undefined) return z.NEVER;
    const names = servers.map((server) => server.name);
    const twice = names.find((name, index) => names.indexOf(name) !== index);
    if (twice !== undefined) {
      context.addIssue({ code: 'custom', message: `names the server "${twice}" twice` });
      return z.NEVER;
    }
    return servers.map((server) => {
      const audience = server.for ?? ['*'];
      return {
        id: `mcp-op-${server.name}`,
        name: server.name,
        url: server.url,
        transport: server.transport ?? 'streamable-http',
        headers: server.headers ?? {},
        tools: server.tools ?? {},
        approval: server.approval ?? 'unless-read-only',
        audience: {
          everyone: audience.includes('*'),
          users: audience.filter((entry) => entry !== '*' && !entry.startsWith('group:')),
          groups: audience.filter((entry) => entry.startsWith('group:')).map((entry) => entry.slice(6)),
        },
      };
    });
  });

const serversRow: SettingRow<OperatorMcpServer[]> = {
  help:
    'MCP servers the operator gives users, as JSON: a list of {name, url, transport?, headers?, tools?: {allow?, ' +
    'deny?}, approval?, for?}, where "for" lists "*" (everyone, the default), user ids and "group:<id>" entries (an ' +
    "Entra ID group in the caller's groups claim). Header values are secrets: in Azure make this setting a Key " +
    'Vault reference.',
  sample: '',
  applies: 'app',
  azure: { kind: 'default' },
  defaultText: undefined,
  schema: serversSchema,
};

export const mcpSettings = defineSettings({
  MCP_SERVERS: serversRow,
  MCP_SECRETS_KEY: textSetting({
    pattern: [/^[A-Za-z0-9+/]{43}=$/, 'must be 32 random bytes in base64 (openssl rand -base64 32)'],
    help:
      "The AES-256-GCM key that seals the header values (API keys) of users' MCP servers in Cosmos DB: 32 random " +
      'bytes in base64. In Azure a Key Vault reference (infra/ sets it); the local runtime makes one in its data ' +
      'folder. Unset: servers with headers cannot be added.',
    azure: { kind: 'bicep' },
  }),
  MCP_ALLOWED_HOSTS: textSetting({
    default: '',
    help:
      'Host names (comma-separated) MCP servers may be reached at although they resolve to a private, loopback or ' +
      'link-local address (in Azure such addresses are refused otherwise; locally loopback is allowed).',
    azure: { kind: 'default' },
  }),
  MCP_TOOL_TIMEOUT_MS: intSetting({
    default: 30_000,
    min: 1_000,
    max: 300_000,
    help: 'How long one MCP tool call (connecting included) may take before the model is told it timed out.',
    azure: { kind: 'default' },
  }),
  MCP_TOOL_OUTPUT_CHARS: intSetting({
    default: 20_000,
    min: 1_000,
    max: 1_000_000,
    help: "An MCP tool's result is cut to this many characters before the model sees it (the rest is dropped).",
    azure: { kind: 'default' },
  }),
  MCP_TOOLS_CACHE_SECONDS: intSetting({
    default: 600,
    min: 0,
    max: 86_400,
    help: "How long a server's tool list is kept before it is listed again (0: every time it is asked for).",
    azure: { kind: 'default' },
  }),
  MCP_TOOLS_PER_TURN: intSetting({
    default: 40,
    min: 0,
    max: 128,
    help: 'At most this many MCP tools are offered to the model in one turn; the rest are left out (logged).',
    azure: { kind: 'default' },
  }),
  MCP_TOOL_SCHEMA_TOKENS: intSetting({
    default: 8_000,
    min: 0,
    max: 200_000,
    help:
      'The MCP tools offered in one turn take at most about this many prompt tokens (their names, descriptions and ' +
      'input schemas); tools past it are left out (logged).',
    azure: { kind: 'default' },
  }),
  MCP_APPROVAL_TIMEOUT_SECONDS: intSetting({
    default: 86_400,
    min: 1,
    max: 2_592_000,
    help:
      "How long a turn waits for its user's yes to an MCP tool call that needs one; then the call is denied " +
      '(timed out) and the model is told so.',
    azure: { kind: 'default' },
  }),
});

export interface McpConfig {
  operatorServers: OperatorMcpServer[];
  /** 32 bytes; undefined when no key is set. */
  secretsKey: Buffer | undefined;
  allowedHosts: string[];
  toolTimeoutMs: number;
  toolOutputChars: number;
  toolsCacheMs: number;
  toolsPerTurn: number;
  toolSchemaTokens: number;
  approvalTimeoutSeconds: number;
}

export function mcpConfig(values: SettingValues<typeof mcpSettings>): McpConfig {
  return {
    operatorServers: values.MCP_SERVERS,
    secretsKey:
      values.MCP_SECRETS_KEY === undefined ? undefined : Buffer.from(values.MCP_SECRETS_KEY, 'base64'),
    allowedHosts: values.MCP_ALLOWED_HOSTS.split(',')
      .map((host) => host.trim().toLowerCase())
      .filter((host) => host !== ''),
    toolTimeoutMs: values.MCP_TOOL_TIMEOUT_MS,
    toolOutputChars: values.MCP_TOOL_OUTPUT_CHARS,
    toolsCacheMs: values.MCP_TOOLS_CACHE_SECONDS * 1000,
    toolsPerTurn: values.MCP_TOOLS_PER_TURN,
    toolSchemaTokens: values.MCP_TOOL_SCHEMA_TOKENS,
    approvalTimeoutSeconds: values.MCP_APPROVAL_TIMEOUT_SECONDS,
  };
}
