// Which latency-model operation each kind of request to the local Cosmos DB waits for.
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';

import { cosmosLatencyOperation } from './cosmos-latency.js';

function request(method: string, url: string, headers: Record<string, string> = {}): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.method = method;
  req.url = url;
  req.headers = headers;
  return req;
}

const docs = '/dbs/db/colls/items/docs';

describe('the latency model operation of a request to the local Cosmos DB', () => {
  it.each([
    ['a point read', request('GET', `${docs}/a`), 'cosmos.point-read'],
    ['a create', request('POST', docs), 'cosmos.write'],
    ['an upsert', request('POST', docs, { 'x-ms-documentdb-is-upsert': 'True' }), 'cosmos.write'],
    ['a replace', request('PUT', `${docs}/a`), 'cosmos.write'],
    ['a patch', request('PATCH', `${docs}/a`), 'cosmos.write'],
    ['a delete', request('DELETE', `${docs}/a`), 'cosmos.write'],
    ['a query', request('POST', docs, { 'x-ms-documentdb-isquery': 'True' }), 'cosmos.query'],
    [
      'a query plan',
      request('POST', docs, {
        'content-type': 'application/query+json',
        'x-ms-cosmos-is-query-plan-request': 'True',
      }),
      'cosmos.query',
    ],
    ['a read of every item', request('GET', docs), 'cosmos.query'],
    ['a batch', request('POST', docs, { 'x-ms-cosmos-is-batch-request': 'True' }), 'cosmos.batch'],
    ['a container read', request('GET', '/dbs/db/colls/items'), 'cosmos.metadata'],
    ['a database read', request('GET', '/dbs/db'), 'cosmos.metadata'],
    ['partition key ranges', request('GET', '/dbs/db/colls/items/pkranges'), 'cosmos.metadata'],
    ['the account', request('GET', '/'), 'cosmos.metadata'],
  ])('%s', (_label, req, operation) => {
    expect(cosmosLatencyOperation(req)).toBe(operation);
  });
});
