// The Cosmos DB adapter of ProjectStore: one document per project in its owner's partition (id = projectId).
import type { Container } from '@azure/cosmos';
import {
  cosmosFailure,
  deleteItem,
  deletePartitionItems,
  queryItems,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { projectDocumentSchema, projectSchema, type Project } from '../contracts.js';
import type { ProjectStore } from '../project-store.js';

const fieldsOf = (document: Project): Project => projectSchema.parse(document);

export function createCosmosProjectStore(container: Container): ProjectStore {
  return {
    async put(project) {
      try {
        await container.items.upsert({ ...project, id: project.projectId, kind: 'project' });
      } catch (error) {
        throw cosmosFailure('storing a project', error);
      }
    },
    async find(userId, projectId) {
      const read = await readItem(container, projectId, userId, 'a project', projectDocumentSchema);
      return read === undefined ? undefined : fieldsOf(read.resource);
    },
    async list(userId) {
      const documents = await queryItems(
        container,
        { query: "SELECT * FROM c WHERE c.kind = 'project' ORDER BY c.name" },
        userId,
        'projects',
        projectDocumentSchema,
      );
      return documents.map(fieldsOf);
    },
    async remove(userId, projectId) {
      await deleteItem(container, projectId, userId, 'a project');
    },
    removeAll(userId) {
      return deletePartitionItems(container, userId, 'projects');
    },
  };
}
