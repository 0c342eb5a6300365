// The in-memory twin of the MCP server store: each user's servers in a map, as the Cosmos DB adapter keeps them in
// the user's partition, so tests can look at what is stored (sealed header values included).
import type { McpOAuthDocument, McpServerDocument, McpToolList } from '../../shared/mcp/contracts.js';
import type { McpServerStore } from '../../shared/mcp/mcp-server-store.js';

export class MemoryMcpServerStore implements McpServerStore {
  /** By `${userId}/${serverId}`. */
  readonly items = new Map<string, McpServerDocument>();
  /** OAuth grants by `${userId}/${serverId}`, each with its version. */
  readonly grants = new Map<string, { grant: McpOAuthDocument; etag: string }>();
  #versions = 0;
  /** How many times a user's servers were listed (a turn lists them at most once). */
  lists = 0;

  list(userId: string) {
    this.lists++;
    return Promise.resolve(
      [...this.items.values()]
        .filter((server) => server.userId === userId)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
        .map((server) => structuredClone(server)),
    );
  }

  get(userId: string, serverId: string) {
    const server = this.items.get(`${userId}/${serverId}`);
    return Promise.resolve(server === undefined ? undefined : structuredClone(server));
  }

  create(server: McpServerDocument) {
    this.items.set(`${server.userId}/${server.id}`, structuredClone(server));
    return Promise.resolve();
  }

  replace(server: McpServerDocument) {
    this.items.set(`${server.userId}/${server.id}`, structuredClone(server));
    return Promise.resolve();
  }

  remove(userId: string, serverId: string) {
    return Promise.resolve(this.items.delete(`${userId}/${serverId}`));
  }

  cacheTools(userId: string, serverId: string, toolList: McpToolList) {
    const server = this.items.get(`${userId}/${serverId}`);
    if (server !== undefined) server.toolList = structuredClone(toolList);
    return Promise.resolve();
  }

  listOAuth(userId: string) {
    return Promise.resolve(
      [...this.grants.values()]
        .filter(({ grant }) => grant.userId === userId)
        .map(({ grant }) => structuredClone(grant)),
    );
  }

  getOAuth(userId: string, serverId: string) {
    const held = this.grants.get(`${userId}/${serverId}`);
    return Promise.resolve(held === undefined ? undefined : structuredClone(held));
  }

  putOAuth(grant: McpOAuthDocument, ifMatch?: string) {
    const key = `${grant.userId}/${grant.serverId}`;
    if (ifMatch !== undefined && this.grants.get(key)?.etag !== ifMatch) return Promise.resolve(false);
    this.grants.set(key, { grant: structuredClone(grant), etag: String(++this.#versions) });
    return Promise.resolve(true);
  }

  removeOAuth(userId: string, serverId: string) {
    return Promise.resolve(this.grants.delete(`${userId}/${serverId}`));
  }
}
