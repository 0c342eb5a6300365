// Creates the product's Cosmos DB database and containers from shared/cosmos/schema.ts when they are missing.
// Safe on every start: existing containers are kept, and a changed default TTL is brought in line.
import type { ContainerDefinition as CosmosContainerDefinition, CosmosClient } from '@azure/cosmos';

import type { ContainerSpec } from '../../shared/cosmos/container-spec.js';
import { ConflictError } from '../../shared/errors.js';

export async function provisionCosmos(
  client: CosmosClient,
  databaseId: string,
  containers: readonly ContainerSpec[],
): Promise<void> {
  const { database } = await client.databases.createIfNotExists({ id: databaseId });
  for (const definition of containers) {
    const wanted = toCosmosDefinition(definition);
    const { container, resource } = await database.containers.createIfNotExists(wanted);
    if (!resource) continue;
    const existingPaths = resource.partitionKey?.paths ?? [];
    if (existingPaths.length !== 1 || existingPaths[0] !== definition.partitionKey) {
      throw new ConflictError(
        `Container '${definition.id}' in database '${databaseId}' has partition key ${existingPaths.join(', ') || '(none)'} ` +
          `but the schema says ${definition.partitionKey}. A partition key cannot change: delete the container ` +
          '(locally: its data file) to re-create it.',
      );
    }
    if (resource.defaultTtl !== definition.defaultTtlSeconds) {
      const { defaultTtl: _previous, ...rest } = resource;
      await container.replace(
        definition.defaultTtlSeconds === undefined
          ? rest
          : { ...rest, defaultTtl: definition.defaultTtlSeconds },
      );
    }
  }
}

function toCosmosDefinition(definition: ContainerSpec): CosmosContainerDefinition {
  return {
    id: definition.id,
    partitionKey: { paths: [definition.partitionKey] },
    ...(definition.defaultTtlSeconds === undefined ? {} : { defaultTtl: definition.defaultTtlSeconds }),
  };
}
