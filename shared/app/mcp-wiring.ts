// MCP servers composed over the app's database: users' servers in their container, the SDK's client behind the
// outbound guard (loopback allowed only in the local runtime), and the key that seals header values.
import type { Database } from '@azure/cosmos';
import { createCosmosMcpServerStore } from '../mcp/adapters/cosmos-mcp-server-store.js';
import type { AddressLookup } from '../mcp/adapters/guarded-fetch.js';
import { createCosmosMcpToolGrants } from '../mcp/adapters/cosmos-mcp-tool-grants.js';
import { createSdkMcpConnector } from '../mcp/adapters/sdk-mcp-connector.js';
import { createSdkMcpAuthorizer } from '../mcp/adapters/sdk-mcp-oauth.js';
import { MCP_SERVERS_CONTAINER } from '../mcp/contracts.js';
import type { McpServices } from '../mcp/mcp-servers.js';
import { createSecretBox } from '../mcp/secret-box.js';
import { McpTurnTools } from '../mcp/turn-tools.js';
import type { AppConfig } from './config.js';

/** A user's servers are read once per turn in a process, and again after this long (or a change made here). */
const SERVERS_KEPT_MS = 15_000;

export function composeMcp(
  config: Pick<AppConfig, 'env' | 'mcp'>,
  database: Database,
  lookup?: AddressLookup,
): McpServices & { turnTools: McpTurnTools } {
  const policy = { allowLoopback: config.env === 'local', allowedHosts: config.mcp.allowedHosts };
  const services: McpServices = {
    store: createCosmosMcpServerStore(database.container(MCP_SERVERS_CONTAINER)),
    connector: createSdkMcpConnector(policy, lookup),
    authorizer: createSdkMcpAuthorizer(policy, lookup),
    box: createSecretBox(config.mcp.secretsKey),
    config: config.mcp,
    operatorTools: new Map(),
    grants: createCosmosMcpToolGrants(database.container(MCP_SERVERS_CONTAINER)),
  };
  const turnTools = new McpTurnTools(services, { cacheMs: SERVERS_KEPT_MS });
  return { ...services, onChange: (userId) => turnTools.forget(userId), turnTools };
}
