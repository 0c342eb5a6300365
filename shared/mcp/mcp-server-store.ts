// The port of users' MCP servers: one item per server in the user's partition, its tool list cached on it.
// Adapter: adapters/cosmos-mcp-server-store.ts. Ids are checked against their closed format at the edge.
import type { McpOAuthDocument, McpServerDocument, McpToolList } from './contracts.js';

export interface McpServerStore {
  /** Every server of the user (one single-partition query), oldest first. */
  list(userId: string): Promise<McpServerDocument[]>;
  /** One server of the user; undefined when there is none (or it is another user's). */
  get(userId: string, serverId: string): Promise<McpServerDocument | undefined>;
  create(server: McpServerDocument): Promise<void>;
  /** Replaces the stored server (its cached tool list goes with the item as given). */
  replace(server: McpServerDocument): Promise<void>;
  /** False when there was none. */
  remove(userId: string, serverId: string): Promise<boolean>;
  /** Keeps the server's last tool list on its item; harmless when the server was removed meanwhile. */
  cacheTools(userId: string, serverId: string, toolList: McpToolList): Promise<void>;
  /** Every OAuth grant of the user (one per server that asked for one). */
  listOAuth(userId: string): Promise<McpOAuthDocument[]>;
  /** The user's grant for a server, with its ETag. */
  getOAuth(userId: string, serverId: string): Promise<{ grant: McpOAuthDocument; etag: string } | undefined>;
  /** Writes the grant; with `ifMatch`, only over that version (false when another write came first). */
  putOAuth(grant: McpOAuthDocument, ifMatch?: string): Promise<boolean>;
  removeOAuth(userId: string, serverId: string): Promise<boolean>;
}
