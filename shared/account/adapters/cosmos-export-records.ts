// The Cosmos DB adapter of ExportRecords: one document per archive in its owner's partition (id = exportId),
// expiring by its own `ttl`.
import type { Container } from '@azure/cosmos';
import { guardedItem } from '../../cosmos/adapters/guarded-item.js';
import { cosmosFailure, cosmosStatus, queryItems, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { exportRecordSchema } from '../contracts.js';
import type { ExportRecords } from '../export-records.js';

export function createCosmosExportRecords(container: Container): ExportRecords {
  return {
    async put(record) {
      try {
        await container.items.upsert(record);
      } catch (error) {
        throw cosmosFailure('storing a data archive record', error);
      }
    },
    async update(record) {
      try {
        await guardedItem(container, record.id, record.userId).replace(record);
        return true;
      } catch (error) {
        if (cosmosStatus(error) === 404) return false;
        throw cosmosFailure('updating a data archive record', error);
      }
    },
    async find(userId, exportId) {
      const read = await readItem(container, exportId, userId, 'a data archive record', exportRecordSchema);
      return read?.resource;
    },
    list(userId) {
      return queryItems(
        container,
        { query: "SELECT * FROM c WHERE c.kind = 'account-export'" },
        userId,
        'data archive records',
        exportRecordSchema,
      );
    },
  };
}
