// The Cosmos DB adapter of AssistantStore: one partition per assistant (its id, a closed format), holding the head
// and one snapshot per version; lists are cross-partition queries by owner or visibility.
import type { Container } from '@azure/cosmos';
import { z } from 'zod';
import {
  cosmosFailure,
  cosmosStatus,
  deletePartitionItems,
  parseStored,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { UnsafeItemIdError } from '../../cosmos/adapters/guarded-item.js';
import { isId } from '../../ids.js';
import type { AssistantStore } from '../assistant-store.js';
import {
  ASSISTANT_HEAD_ID,
  assistantHeadSchema,
  assistantSchema,
  assistantVersionId,
  assistantVersionSchema,
  type Assistant,
} from '../contracts.js';

function checked(assistantId: string): string {
  if (!isId('assistantId', assistantId))
    throw new UnsafeItemIdError('partition key', assistantId, 'not an assistantId');
  return assistantId;
}

function fieldsOf(document: Assistant): Assistant {
  return assistantSchema.parse(document);
}

export function createCosmosAssistantStore(container: Container): AssistantStore {
  const query = async (text: string, parameters: { name: string; value: string }[]) => {
    try {
      const { resources } = await container.items.query({ query: text, parameters }).fetchAll();
      return parseStored(z.array(assistantHeadSchema), resources, 'assistants').map(fieldsOf);
    } catch (error) {
      if (error instanceof Error && error.name === 'DependencyError') throw error;
      throw cosmosFailure('listing assistants', error);
    }
  };
  return {
    async putVersion(assistant) {
      const assistantId = checked(assistant.assistantId);
      try {
        // The snapshot first: its create is what orders racing edits (one wins each version number).
        await container.items.create({
          ...assistant,
          id: assistantVersionId(assistant.version),
          kind: 'assistant-version',
        });
      } catch (error) {
        if (cosmosStatus(error) === 409) return false;
        throw cosmosFailure('storing an assistant version', error);
      }
      try {
        await container.items.upsert({ ...assistant, assistantId, id: ASSISTANT_HEAD_ID, kind: 'assistant' });
      } catch (error) {
        throw cosmosFailure('storing an assistant', error);
      }
      return true;
    },
    async head(assistantId) {
      const read = await readItem(
        container,
        ASSISTANT_HEAD_ID,
        checked(assistantId),
        'an assistant',
        assistantHeadSchema,
      );
      return read === undefined ? undefined : fieldsOf(read.resource);
    },
    async version(assistantId, version) {
      const read = await readItem(
        container,
        assistantVersionId(version),
        checked(assistantId),
        'an assistant version',
        assistantVersionSchema,
      );
      return read === undefined ? undefined : fieldsOf(read.resource);
    },
    visibleTo(userId) {
      return query(
        "SELECT * FROM c WHERE c.kind = 'assistant' AND (c.ownerId = @userId OR c.visibility = 'public')",
        [{ name: '@userId', value: userId }],
      );
    },
    async remove(assistantId) {
      await deletePartitionItems(container, checked(assistantId), 'an assistant');
    },
    async ownedBy(userId) {
      const owned = await query("SELECT * FROM c WHERE c.kind = 'assistant' AND c.ownerId = @userId", [
        { name: '@userId', value: userId },
      ]);
      return owned.map((assistant) => assistant.assistantId);
    },
  };
}
