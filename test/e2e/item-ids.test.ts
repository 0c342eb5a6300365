// Ids that would collapse a Cosmos DB item URL to its container's (`.`, `..`, percent-encoded too), sent by user_002
// over raw HTTP request targets and over MCP: each is refused with a 4xx and deletes nothing, and user_001's facts
// and the profile-facts container are intact after every attempt and after a restart.
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { PROFILE_FACTS_CONTAINER } from '../../shared/memory/contracts.js';
import { newFactId } from '../../shared/memory/consolidate-turn.js';
import type { MemoriesPage } from '../../shared/memory/memory-api.js';
import { factSource, profileFact, storeFacts } from '../support/memory-fixtures.js';
import { startTestRuntime } from '../support/local-runtime.js';

const SESSION = '11111111-1111-4111-8111-111111111111';
const ALICE_FACTS = [newFactId(SESSION, 'alice', 0), newFactId(SESSION, 'alice', 1)].sort();
const BOB_FACT = newFactId(SESSION, 'bob', 0);

/** `factId` values as they appear in a query string: the dot segments, plain and percent-encoded. */
const HOSTILE_FACT_IDS = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2e',
  '..%2F..',
  '%2e%2e%2f',
  '%252e%252e',
  '..%00',
];

/** Request targets whose id segment is a dot segment, percent-encoded (a literal one no client would send). */
const HOSTILE_PATHS: [method: string, target: string][] = [
  ['DELETE', '/api/history/conversations/%2e%2e'],
  ['DELETE', '/api/history/conversations/%2E%2E/'],
  ['GET', '/api/history/conversations/.%2e/export'],
  ['DELETE', '/api/knowledge/documents/%2e%2e'],
  ['DELETE', '/api/knowledge/documents/%252e%252e'],
  ['POST', '/api/chat/%2e%2e/%2e%2e/cancel'],
  ['GET', '/api/stream/%2e/%2e%2e'],
  ['DELETE', '/api/memory/users/%2e%2e/memories'],
  ['DELETE', '/api/memory/users/user_002%2f%2e%2e/memories'],
];

let dataDir: string;
let runtime: LocalRuntime;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'item-ids-'));
  runtime = await startTestRuntime({ dataDir });
  await storeFacts(
    runtime.app.memory.facts,
    ...ALICE_FACTS.map((id) => profileFact('user_001', id, [factSource(SESSION, 1)])),
    profileFact('user_002', BOB_FACT, [factSource(SESSION, 1)]),
  );
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 60_000);

/** A request sent with its target exactly as given (fetch would resolve dot segments before sending). */
function rawRequest(
  method: string,
  target: string,
  userId: string,
): Promise<{ status: number; contentType: string | undefined; body: string }> {
  const { hostname, port } = new URL(runtime.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { hostname, port, method, path: target, headers: { 'x-ms-client-principal-id': userId } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** user_001's facts as the API shows them, and the container's own state straight from Cosmos DB. */
async function expectEverythingIntact(): Promise<void> {
  const reply = await rawRequest('GET', '/api/memory/users/user_001/memories', 'user_001');
  expect(reply.status, reply.body).toBe(200);
  const page = JSON.parse(reply.body) as MemoriesPage;
  expect(page.facts.map((fact) => fact.factId).sort()).toEqual(ALICE_FACTS);
  const bob = await rawRequest('GET', '/api/memory/users/user_002/memories', 'user_002');
  expect((JSON.parse(bob.body) as MemoriesPage).facts.map((fact) => fact.factId)).toEqual([BOB_FACT]);
  const container = await runtime.clients.database.container(PROFILE_FACTS_CONTAINER).read();
  expect(container.statusCode).toBe(200);
}

describe('ids that would reach a container-level URL', () => {
  it.each(HOSTILE_FACT_IDS)(
    'DELETE .../memories?factId=%s answers 400 and deletes nothing',
    async (factId) => {
      const reply = await rawRequest(
        'DELETE',
        `/api/memory/users/user_002/memories?factId=${factId}`,
        'user_002',
      );
      expect(reply.status, reply.body).toBe(400);
      expect(reply.contentType).toBe('application/problem+json');
      expect(JSON.parse(reply.body)).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: 'factId', message: expect.stringMatching(/^must be a factId/) as unknown }],
      });
      await expectEverythingIntact();
    },
  );

  it.each(HOSTILE_PATHS)('%s %s is refused with a 4xx and deletes nothing', async (method, target) => {
    const reply = await rawRequest(method, target, 'user_002');
    expect(reply.status, reply.body).toBeGreaterThanOrEqual(400);
    expect(reply.status, reply.body).toBeLessThan(500);
    await expectEverythingIntact();
  });

  it('MCP delete_memory refuses a dot-segment factId with a tool error and deletes nothing', async () => {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${runtime.url}/api/mcp`), {
        requestInit: { headers: { 'x-ms-client-principal-id': 'user_002' } },
      }),
    );
    try {
      for (const factId of ['..', '.', '%2e%2e', '../..', '']) {
        const result = await client.callTool({ name: 'delete_memory', arguments: { factId } });
        expect(result.isError, JSON.stringify(result.content)).toBe(true);
        expect(JSON.stringify(result.content)).toMatch(/factId/);
        expect(JSON.stringify(result.content)).not.toMatch(/No fact/);
        await expectEverythingIntact();
      }
    } finally {
      await client.close();
    }
  }, 120_000);

  it("keeps user_001's facts across a restart", async () => {
    await runtime.stop();
    runtime = await startTestRuntime({ dataDir });
    await expectEverythingIntact();
  }, 120_000);
});
