// MCP servers composed over the app's database: users' servers in their container, the SDK's client behind the
// outbound guard (loopback allowed only in the local runtime), and the key that seals header values.
import type { Database } from '@azure/cosmos';
import { createCosmosMcpServerStore } from '../mcp/adapters/cosmos-mcp-server-store.js';
import type { AddressLookup } from '../mcp/adapters/guarded-fetch.js';
import { createSdkMcpConnector } from '../mcp/adapters/sdk-mcp-connector.js';
import { MCP_SERVERS_CONTAINER } from '../mcp/contracts.js';
import type { McpServices } from '../mcp/mcp-servers.js';
import { createSecretBox } from '../mcp/secret-box.js';
import type { AppConfig } from './config.js';

export function composeMcp(
  config: Pick<AppConfig, 'env' | 'mcp'>,
  database: Database,
  lookup?: AddressLookup,
): McpServices {
  return {
    store: createCosmosMcpServerStore(database.container(MCP_SERVERS_CONTAINER)),
    connector: createSdkMcpConnector(
      { allowLoopback: config.env === 'local', allowedHosts: config.mcp.allowedHosts },
      lookup,
    ),
    box: createSecretBox(config.mcp.secretsKey),
    config: config.mcp,
    operatorTools: new Map(),
  };
}
