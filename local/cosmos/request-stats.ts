// Counts the local Cosmos DB's requests and their bytes by operation, so benchmarks can see what a turn costs
// in Cosmos round trips (Azure bills per request unit; locally the count and size of requests stand in).
import type { IncomingMessage } from 'node:http';
import type { RouteParams } from './cosmosdb-server-internals.js';

export interface CosmosStats {
  requests: number;
  /** Request bodies, as their Content-Length says. */
  requestBytes: number;
  /** Response bodies as sent. */
  responseBytes: number;
  /** Requests per operation: `read item`, `upsert item`, `query items`, `patch item`, ... */
  byOperation: Record<string, number>;
}

export class CosmosRequestStats {
  #stats: CosmosStats = emptyStats();

  record(operation: string, requestBytes: number, responseBytes: number): void {
    this.#stats.requests += 1;
    this.#stats.requestBytes += requestBytes;
    this.#stats.responseBytes += responseBytes;
    this.#stats.byOperation[operation] = (this.#stats.byOperation[operation] ?? 0) + 1;
  }

  snapshot(): CosmosStats {
    return { ...this.#stats, byOperation: { ...this.#stats.byOperation } };
  }

  reset(): void {
    this.#stats = emptyStats();
  }
}

function emptyStats(): CosmosStats {
  return { requests: 0, requestBytes: 0, responseBytes: 0, byOperation: {} };
}

/** A request's operation in the SDK's vocabulary, from its method, headers and route. */
export function cosmosOperation(req: IncomingMessage, params: RouteParams | undefined): string {
  const resource =
    params?.docId !== undefined
      ? 'item'
      : params?.collId !== undefined
        ? 'items'
        : params?.dbId !== undefined
          ? 'database'
          : 'account';
  const method = req.method ?? 'GET';
  const header = (name: string) => String(req.headers[name] ?? '').toLowerCase() === 'true';
  const verb =
    method === 'GET'
      ? 'read'
      : method === 'DELETE'
        ? 'delete'
        : method === 'PATCH'
          ? 'patch'
          : method === 'PUT'
            ? 'replace'
            : header('x-ms-documentdb-isquery') || req.headers['content-type'] === 'application/query+json'
              ? 'query'
              : header('x-ms-cosmos-is-batch-request')
                ? 'batch'
                : header('x-ms-documentdb-is-upsert')
                  ? 'upsert'
                  : 'create';
  return `${verb} ${resource}`;
}

export function contentLength(req: IncomingMessage): number {
  const length = Number(req.headers['content-length'] ?? 0);
  return Number.isFinite(length) ? length : 0;
}
