// What the MCP use-cases are given (the store, the client, the key, the settings), and which of the operator's
// servers an identity may use.
import type { Caller } from '../identity/caller.js';
import type { McpToolList } from './contracts.js';
import type { McpAuthorizer, McpConnector } from './mcp-connector.js';
import type { McpServerStore } from './mcp-server-store.js';
import type { SecretBox } from './secret-box.js';
import type { McpToolGrantStore } from './tool-grants.js';
import type { McpConfig, OperatorMcpServer } from './settings.js';

export interface McpServices {
  store: McpServerStore;
  connector: McpConnector;
  authorizer: McpAuthorizer;
  box: SecretBox;
  config: McpConfig;
  /** Tool lists of the operator's servers, kept in this process (they have no item of their own). */
  operatorTools: Map<string, McpToolList>;
  /** The users' "always allow this tool" (absent: none is remembered). */
  grants?: McpToolGrantStore;
  /** Told when a user's servers change, so what this process keeps of them goes. */
  onChange?: (userId: string) => void;
  now?: () => Date;
}

/** Who an identity is, as far as the operator's servers' audiences go. */
export type McpAudienceMember = Pick<Caller, 'userId' | 'groups'>;

export function operatorServersFor(config: McpConfig, who: McpAudienceMember): OperatorMcpServer[] {
  return config.operatorServers.filter(
    ({ audience }) =>
      audience.everyone ||
      audience.users.includes(who.userId) ||
      audience.groups.some((group) => who.groups?.includes(group) === true),
  );
}
