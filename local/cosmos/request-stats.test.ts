// The local Cosmos DB's request counters: operation names from real request shapes, and reset.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { contentLength, cosmosOperation, CosmosRequestStats } from './request-stats.js';

function request(method: string, headers: Record<string, string> = {}): IncomingMessage {
  return { method, headers } as unknown as IncomingMessage;
}

const item = { dbId: 'db', collId: 'c', docId: 'd' };
const items = { dbId: 'db', collId: 'c' };

describe('cosmosOperation', () => {
  it.each([
    ['GET', {}, item, 'read item'],
    ['PATCH', {}, item, 'patch item'],
    ['PUT', {}, item, 'replace item'],
    ['DELETE', {}, item, 'delete item'],
    ['POST', {}, items, 'create items'],
    ['POST', { 'x-ms-documentdb-is-upsert': 'True' }, items, 'upsert items'],
    ['POST', { 'x-ms-documentdb-isquery': 'True' }, items, 'query items'],
    ['POST', { 'content-type': 'application/query+json' }, items, 'query items'],
    ['POST', { 'x-ms-cosmos-is-batch-request': 'True' }, items, 'batch items'],
    ['GET', {}, undefined, 'read account'],
  ])('%s %j → %s', (method, headers, params, expected) => {
    expect(cosmosOperation(request(method, headers), params)).toBe(expected);
  });
});

describe('CosmosRequestStats', () => {
  it('adds requests and bytes by operation, and starts again after reset', () => {
    const stats = new CosmosRequestStats();
    stats.record('read item', 0, 100);
    stats.record('read item', 0, 50);
    stats.record('upsert items', 30, 40);
    expect(stats.snapshot()).toEqual({
      requests: 3,
      requestBytes: 30,
      responseBytes: 190,
      byOperation: { 'read item': 2, 'upsert items': 1 },
    });
    stats.reset();
    expect(stats.snapshot()).toEqual({ requests: 0, requestBytes: 0, responseBytes: 0, byOperation: {} });
  });

  it('reads a missing or odd Content-Length as 0', () => {
    expect(contentLength(request('POST', { 'content-length': '12' }))).toBe(12);
    expect(contentLength(request('POST'))).toBe(0);
    expect(contentLength(request('POST', { 'content-length': 'x' }))).toBe(0);
  });
});
