// The port of "always allow this tool": a user's standing yes to the calls of one tool of one MCP server (their own
// or the operator's), remembered until they revoke it. Adapter: adapters/cosmos-mcp-tool-grants.ts.
import { z } from 'zod';

export const mcpToolGrantSchema = z.object({
  serverId: z.string(),
  /** The tool's name on its server (not the name the model knows it by). */
  tool: z.string(),
  grantedAt: z.string(),
});
export type McpToolGrant = z.infer<typeof mcpToolGrantSchema>;

export const mcpToolGrantListSchema = z.object({
  serverId: z.string(),
  approvals: z.array(mcpToolGrantSchema),
});

export interface McpToolGrantStore {
  /** The user's standing yeses for the server's tools, oldest first. */
  list(userId: string, serverId: string): Promise<McpToolGrant[]>;
  /** Remembers one (granting it again keeps the first). */
  grant(userId: string, grant: McpToolGrant): Promise<void>;
  /** Forgets the one for `tool`, or all of the server's; how many went. */
  revoke(userId: string, serverId: string, tool?: string): Promise<number>;
}
