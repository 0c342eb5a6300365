// The Cosmos DB adapter of McpToolGrantStore: one item per standing yes beside the user's servers in `mcp-servers`
// (partition /userId), its id made of the server's id and a digest of the tool's name (any name is a safe id).
import { createHash } from 'node:crypto';
import type { Container } from '@azure/cosmos';
import { z } from 'zod';
import { cosmosFailure, cosmosStatus, deleteItem, queryItems } from '../../cosmos/adapters/cosmos-items.js';
import { mcpToolGrantSchema, type McpToolGrantStore } from '../tool-grants.js';

const grantItemSchema = mcpToolGrantSchema.extend({ id: z.string() });

function grantId(serverId: string, tool: string): string {
  return `grant.${serverId}.${createHash('sha256').update(tool, 'utf8').digest('hex').slice(0, 32)}`;
}

export function createCosmosMcpToolGrants(container: Container): McpToolGrantStore {
  const list = async (userId: string, serverId: string) =>
    queryItems(
      container,
      {
        query:
          "SELECT * FROM c WHERE c.kind = 'mcp-tool-grant' AND c.serverId = @serverId ORDER BY c.grantedAt",
        parameters: [{ name: '@serverId', value: serverId }],
      },
      userId,
      'remembered MCP approvals',
      grantItemSchema,
    );
  return {
    async list(userId, serverId) {
      return (await list(userId, serverId)).map(({ serverId: server, tool, grantedAt }) => ({
        serverId: server,
        tool,
        grantedAt,
      }));
    },

    async grant(userId, grant) {
      try {
        await container.items.create({
          id: grantId(grant.serverId, grant.tool),
          kind: 'mcp-tool-grant',
          userId,
          ...grant,
        });
      } catch (error) {
        if (cosmosStatus(error) === 409) return;
        throw cosmosFailure('remembering an MCP approval', error);
      }
    },

    async revoke(userId, serverId, tool) {
      const tools = tool === undefined ? (await list(userId, serverId)).map((grant) => grant.tool) : [tool];
      const removed = await Promise.all(
        tools.map((name) =>
          deleteItem(container, grantId(serverId, name), userId, 'a remembered MCP approval'),
        ),
      );
      return removed.filter(Boolean).length;
    },
  };
}
