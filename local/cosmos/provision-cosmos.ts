// Creates the product's Cosmos DB database and containers from shared/app/cosmos-containers.ts when they are
// missing. Safe on every start: existing containers are kept, and a changed default TTL is brought in line.
import {
  PartitionKeyKind,
  type ContainerDefinition as CosmosContainerDefinition,
  type CosmosClient,
} from '@azure/cosmos';

import type { ContainerSpec } from '../../shared/cosmos/container-spec.js';
import { indexingPaths } from '../../shared/cosmos/indexed-paths.js';

/** A container's partition key differs from the definition's: it cannot change in place, so start-up stops. */
export class PartitionKeyChangedError extends Error {
  override name = 'PartitionKeyChangedError';
}

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
      throw new PartitionKeyChangedError(
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
  const indexing = indexingPaths(spec);
  return {
    id: spec.id,
    partitionKey: {
      paths,
      ...(paths.length > 1 ? { kind: PartitionKeyKind.MultiHash, version: 2 } : {}),
    },
    ...(spec.defaultTtlSeconds === undefined ? {} : { defaultTtl: spec.defaultTtlSeconds }),
    // The policy Azure's containers get (infra/), so what the local server is told matches what Azure indexes.
    indexingPolicy: {
      indexingMode: 'consistent',
      automatic: true,
      includedPaths: indexing.included.map((path) => ({ path })),
      excludedPaths: indexing.excluded.map((path) => ({ path })),
    },
  };
}
