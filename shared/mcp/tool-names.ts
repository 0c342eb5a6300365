// The names the model knows MCP tools by: `mcp__{server}__{tool}`, only the characters model APIs accept, at most
// 64 characters, unique; and which tools a server's allow and deny lists let through.
import { createHash } from 'node:crypto';
import type { ToolFilter } from './contracts.js';

export const MODEL_TOOL_NAME_MAX = 64;
export const MCP_TOOL_PREFIX = 'mcp__';
/** How an assistant's tools name an MCP server: `mcp:<serverId>`. */
export const MCP_SERVER_PREFIX = 'mcp:';

/** The MCP servers a conversation's tool names name; undefined (all of the user's) when it names no tools at all. */
export function namedServers(tools: readonly string[] | undefined): string[] | undefined {
  return tools
    ?.filter((name) => name.startsWith(MCP_SERVER_PREFIX))
    .map((name) => name.slice(MCP_SERVER_PREFIX.length));
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 6);
}

/** Each tool's model name, by its name on the server; names that collide once cleaned get a hash suffix. */
export function modelToolNames(server: string, tools: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool)) continue;
    const clean = `${MCP_TOOL_PREFIX}${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    let name = clean.slice(0, MODEL_TOOL_NAME_MAX);
    if (used.has(name) || name !== clean || clean !== `${MCP_TOOL_PREFIX}${server}__${tool}`)
      name = `${clean.slice(0, MODEL_TOOL_NAME_MAX - 7)}_${shortHash(tool)}`;
    // A hash collision between two tools of one server is left out rather than guessed.
    if (used.has(name)) continue;
    used.add(name);
    names.set(tool, name);
  }
  return names;
}

export function isOffered(filter: ToolFilter, tool: string): boolean {
  if (filter.allow !== undefined && !filter.allow.includes(tool)) return false;
  return !(filter.deny ?? []).includes(tool);
}
