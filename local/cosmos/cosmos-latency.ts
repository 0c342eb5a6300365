// Which of the Azure latency model's Cosmos DB operations a request to the local server is, so its answer can wait
// as long as Azure's would: point reads, writes, queries, batches, and the metadata reads the SDK makes.
import type { IncomingMessage } from 'node:http';

import type { AzureLatencyOperation } from '../latency/azure-latency.js';
import { operationOf } from './request-listener.js';

type CosmosLatencyOperation = Extract<AzureLatencyOperation, `cosmos.${string}`>;

export function cosmosLatencyOperation(req: IncomingMessage): CosmosLatencyOperation {
  const operation = operationOf(req);
  // The SDK's query-plan request is a round trip to the gateway before the query's own, as a query is.
  if (operation.endsWith('.query') || operation === 'item.readAll') return 'cosmos.query';
  if (operation === 'item.batch') return 'cosmos.batch';
  if (operation === 'item.read') return 'cosmos.point-read';
  if (operation.startsWith('item.')) return 'cosmos.write';
  return 'cosmos.metadata';
}
