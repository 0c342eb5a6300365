// Creates the product's Cosmos DB database and containers from shared/app/cosmos-containers.ts when they are missing.
// Safe on every start: existing containers are kept, and a changed default TTL is brought in line.
//
// What the local server (@vercel/cosmosdb-server) does with them, unlike Azure:
// - Vector embedding and full-text policies and their indexes are not passed: the server would store them but not
//   use them (no VectorDistance, FullTextContains or FullTextScore), and their vector length is an infra parameter.
//   The adapters rank in process where these functions are missing.
// - A hierarchical (MultiHash) key is created and reported as in Azure, and an item round-trips with its full key,
//   but the server files items under the first path only: an id is unique per first-level value (per user, not per
//   user and session) and a point read does not check the later components. A query's partitionKey option (the full
//   key or a prefix) does scope it, as in Azure, through local-cosmos's partition index.
import {
  PartitionKeyKind,
  type ContainerDefinition as CosmosContainerDefinition,
  type CosmosClient,
} from '@azure/cosmos';

import type { ContainerSpec } from '../../shared/cosmos/container-spec.js';
import { ConflictError } from '../../shared/errors.js';

export async function provisionCosmos(
  client: CosmosClient,
  databaseId: string,
  containers: readonly ContainerSpec[],
): Promise<void> {
  const { database } = await client.databases.createIfNotExists({ id: databaseId });
  for (const spec of containers) {
    const wanted = toCosmosDefinition(spec);
    const { container, resource } = await database.containers.createIfNotExists(wanted);
    if (!resource) continue;
    const existingPaths = resource.partitionKey?.paths ?? [];
    if (existingPaths.join(',') !== spec.partitionKeyPaths.join(',')) {
      throw new ConflictError(
        `Container '${spec.id}' in database '${databaseId}' has partition key ${existingPaths.join(', ') || '(none)'} ` +
          `but the schema says ${spec.partitionKeyPaths.join(', ')}. A partition key cannot change: delete the ` +
          'container (locally: its data file) to re-create it.',
      );
    }
    if (resource.defaultTtl !== spec.defaultTtlSeconds) {
      const { defaultTtl: _previous, ...rest } = resource;
      await container.replace(
        spec.defaultTtlSeconds === undefined ? rest : { ...rest, defaultTtl: spec.defaultTtlSeconds },
      );
    }
  }
}

function toCosmosDefinition(spec: ContainerSpec): CosmosContainerDefinition {
  const paths = [...spec.partitionKeyPaths];
  return {
    id: spec.id,
    partitionKey: {
      paths,
      ...(paths.length > 1 ? { kind: PartitionKeyKind.MultiHash, version: 2 } : {}),
    },
    ...(spec.defaultTtlSeconds === undefined ? {} : { defaultTtl: spec.defaultTtlSeconds }),
  };
}
