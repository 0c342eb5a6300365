// The client the MCP conformance suite drives (`conformance client --command ...`): the product's own MCP use-cases,
// connector and authorizer over in-memory ports, adding the server URL the suite appends, connecting through OAuth
// when it asks (the suite's authorization server consents at once), listing its tools and calling them.
import { randomBytes } from 'node:crypto';
import { createSdkMcpConnector } from '../../shared/mcp/adapters/sdk-mcp-connector.js';
import { createSdkMcpAuthorizer } from '../../shared/mcp/adapters/sdk-mcp-oauth.js';
import { McpAuthorizationRequiredError } from '../../shared/mcp/mcp-connector.js';
import { finishMcpOAuth, startMcpOAuth } from '../../shared/mcp/mcp-oauth.js';
import { createMcpServer, mcpServerTools, type McpServices } from '../../shared/mcp/mcp-servers.js';
import { createSecretBox } from '../../shared/mcp/secret-box.js';
import { McpTurnTools } from '../../shared/mcp/turn-tools.js';
import { MemoryMcpServerStore } from './in-memory-mcp.js';

/** Where this service would be: the callback URL the authorization server sends the browser back to. */
const API_ORIGIN = 'http://localhost:7071';
const caller = { userId: 'user_001' };

/** Arguments a tool's input schema asks for: numbers, strings and booleans of its properties. */
function argumentsFor(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, { type?: string }>;
  return Object.fromEntries(
    Object.entries(properties).map(([name, property], index) => [
      name,
      property.type === 'number' || property.type === 'integer'
        ? index + 2
        : property.type === 'boolean'
          ? true
          : 'x',
    ]),
  );
}

/** The browser's part: open the authorization URL, follow the consent back to the callback. */
async function consent(services: McpServices, serverId: string): Promise<void> {
  const { authorizationUrl } = await startMcpOAuth(services, caller, serverId, API_ORIGIN);
  const answer = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = answer.headers.get('location');
  if (location === null)
    throw new Error(`The authorization endpoint answered ${answer.status}, not a redirect.`);
  const query = new URL(location, authorizationUrl).searchParams;
  const outcome = await finishMcpOAuth(
    services,
    serverId,
    Object.fromEntries(
      ['state', 'code', 'iss', 'error'].flatMap((name) => {
        const value = query.get(name);
        return value === null ? [] : [[name, value]];
      }),
    ),
    API_ORIGIN,
  );
  if (!outcome.ok) throw new Error(`The callback was refused: ${outcome.reason} ${outcome.detail ?? ''}`);
}

async function main(): Promise<void> {
  const url = process.argv.at(-1);
  if (url === undefined || !/^https?:/.test(url))
    throw new Error('Usage: mcp-conformance-client <server-url>');
  const policy = { allowLoopback: true, allowedHosts: [] };
  const services: McpServices = {
    store: new MemoryMcpServerStore(),
    connector: createSdkMcpConnector(policy),
    authorizer: createSdkMcpAuthorizer(policy),
    box: createSecretBox(randomBytes(32)),
    config: {
      operatorServers: [],
      secretsKey: undefined,
      allowedHosts: [],
      toolTimeoutMs: 20_000,
      toolOutputChars: 20_000,
      toolsCacheMs: 0,
      toolsPerTurn: 40,
      toolSchemaTokens: 8_000,
      approvalTimeoutSeconds: 3_600,
    },
    operatorTools: new Map(),
  };
  const server = await createMcpServer(services, caller, { name: 'suite', url, approval: 'never' });
  let listed;
  try {
    listed = await mcpServerTools(services, caller, server.id);
  } catch (error) {
    if (!(error instanceof McpAuthorizationRequiredError)) throw error;
    await consent(services, server.id);
    listed = await mcpServerTools(services, caller, server.id);
  }
  const turnTools = new McpTurnTools(services, { cacheMs: 0 });
  for (const tool of listed.tools.filter((each) => each.modelName !== undefined).slice(0, 3)) {
    const outcome = await turnTools.execute(
      {
        id: `call-${tool.name}`,
        name: tool.modelName ?? '',
        arguments: JSON.stringify(argumentsFor(tool.inputSchema)),
      },
      caller,
    );
    process.stdout.write(
      `${tool.name}: ${outcome.isError ? 'error' : 'ok'} ${outcome.result.slice(0, 200)}\n`,
    );
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
