// The Cosmos DB adapter of McpServerStore: `mcp-servers` (partition /userId), one item per server; a server's
// tool list is patched onto its item, so listing a user's servers with their tools is one query.
import type { Container } from '@azure/cosmos';
import {
  cosmosFailure,
  cosmosStatus,
  deleteItem,
  queryItems,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { guardedItem, UnsafeItemIdError } from '../../cosmos/adapters/guarded-item.js';
import { isId } from '../../ids.js';
import { mcpOAuthDocumentId, mcpOAuthDocumentSchema, mcpServerDocumentSchema } from '../contracts.js';
import type { McpServerStore } from '../mcp-server-store.js';

function checkedServerId(serverId: string): string {
  if (!isId('mcpServerId', serverId)) throw new UnsafeItemIdError('item id', serverId, 'not an mcpServerId');
  return serverId;
}

export function createCosmosMcpServerStore(container: Container): McpServerStore {
  return {
    list(userId) {
      return queryItems(
        container,
        { query: "SELECT * FROM c WHERE c.kind = 'mcp-server' ORDER BY c.createdAt" },
        userId,
        'MCP servers',
        mcpServerDocumentSchema,
      );
    },

    async get(userId, serverId) {
      const read = await readItem(
        container,
        checkedServerId(serverId),
        userId,
        'an MCP server',
        mcpServerDocumentSchema,
      );
      return read?.resource;
    },

    async create(server) {
      checkedServerId(server.id);
      try {
        await container.items.create(server);
      } catch (error) {
        throw cosmosFailure('storing an MCP server', error);
      }
    },

    async replace(server) {
      const item = guardedItem(container, checkedServerId(server.id), server.userId);
      try {
        await item.replace(server);
      } catch (error) {
        throw cosmosFailure('storing an MCP server', error);
      }
    },

    remove(userId, serverId) {
      return deleteItem(container, checkedServerId(serverId), userId, 'an MCP server');
    },

    async cacheTools(userId, serverId, toolList) {
      const item = guardedItem(container, checkedServerId(serverId), userId);
      try {
        await item.patch([{ op: 'set', path: '/toolList', value: toolList }]);
      } catch (error) {
        if (cosmosStatus(error) === 404) return;
        throw cosmosFailure("keeping an MCP server's tools", error);
      }
    },

    listOAuth(userId) {
      return queryItems(
        container,
        { query: "SELECT * FROM c WHERE c.kind = 'mcp-oauth'" },
        userId,
        'MCP OAuth grants',
        mcpOAuthDocumentSchema,
      );
    },

    async getOAuth(userId, serverId) {
      const read = await readItem(
        container,
        mcpOAuthDocumentId(checkedServerId(serverId)),
        userId,
        'an MCP OAuth grant',
        mcpOAuthDocumentSchema,
      );
      return read === undefined ? undefined : { grant: read.resource, etag: read.etag };
    },

    async putOAuth(grant, ifMatch) {
      const id = mcpOAuthDocumentId(checkedServerId(grant.serverId));
      try {
        if (ifMatch === undefined) await container.items.upsert({ ...grant, id });
        else
          await guardedItem(container, id, grant.userId).replace(
            { ...grant, id },
            { accessCondition: { type: 'IfMatch', condition: ifMatch } },
          );
        return true;
      } catch (error) {
        if (ifMatch !== undefined && (cosmosStatus(error) === 412 || cosmosStatus(error) === 404))
          return false;
        throw cosmosFailure('storing an MCP OAuth grant', error);
      }
    },

    removeOAuth(userId, serverId) {
      return deleteItem(
        container,
        mcpOAuthDocumentId(checkedServerId(serverId)),
        userId,
        'an MCP OAuth grant',
      );
    },
  };
}
