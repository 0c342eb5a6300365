// How a Cosmos DB container is declared in code. Each area declares its containers in its contracts module;
// shared/cosmos/containers.ts lists them all for the local runtime (which provisions them) and for infra/
// (scripts/generate-definitions.ts writes them into infra/generated/definitions.json).

export interface ContainerSpec {
  /** Container id. */
  id: string;
  /** Partition key path. */
  partitionKey: string;
  /** Default time to live in seconds; -1 = items expire only when they set `ttl`; undefined = never. */
  defaultTtlSeconds?: number;
  /** What the container holds, for readers of infra and the portal. */
  purpose: string;
}
