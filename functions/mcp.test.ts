// MCP's authorization in Entra ID mode, in process: the protected resource metadata, the 401 challenge that
// points at it, and the tools reached with a valid token as its user; in the other modes no metadata is
// served.
import {
  Client,
  StreamableHTTPClientTransport,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/client';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createIdentityResolver } from '../shared/identity/identity-resolver.js';
import type { ProtectedResourceMetadata } from '../shared/identity/protected-resource.js';
import { callEndpoint } from '../test/support/call-endpoint.js';
import { inProcessFetch } from '../test/support/in-process-fetch.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { factSource, profileFact, storeFacts } from '../test/support/memory-fixtures.js';
import { mcpHandler, protectedResourceMetadataEndpoint } from './mcp.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const ISSUER = `https://login.microsoftonline.com/${TENANT}/v2.0`;
const API_CLIENT_ID = '3fa85f64-5717-4562-b3fc-2c963f66afa6';
const OID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const JWKS_URL = 'https://keys.test/discovery/v2.0/keys';
const MCP_URL = 'http://localhost:7071/api/mcp';
const METADATA_URL = 'http://localhost:7071/api/oauth-protected-resource/mcp';

let signingKey: CryptoKey;
let publicJwk: JWK;
beforeAll(async () => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  signingKey = privateKey;
  publicJwk = { ...(await exportJWK(publicKey)), kid: 'key-1', alg: 'RS256', use: 'sig' };
});

/** An app in Entra ID mode whose signing keys come from this test, not from the network. */
function entraApp(): TestApp {
  const app = createTestApp({
    settings: {
      AUTH_MODE: 'entra',
      AUTH_ENTRA_TENANT_ID: TENANT,
      AUTH_ENTRA_AUDIENCE: `api://${API_CLIENT_ID},${API_CLIENT_ID}`,
      AUTH_ENTRA_JWKS_URL: JWKS_URL,
    },
  });
  const keys: typeof fetch = () => Promise.resolve(Response.json({ keys: [publicJwk] }));
  return { ...app, identity: createIdentityResolver(app.config.auth, { fetch: keys }) };
}

function token(key: CryptoKey = signingKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: ISSUER,
    aud: `api://${API_CLIENT_ID}`,
    oid: OID,
    name: 'Alice',
    scp: 'user_impersonation',
  })
    .setProtectedHeader({ alg: 'RS256', kid: 'key-1', typ: 'JWT' })
    .setIssuedAt(now - 60)
    .setNotBefore(now - 60)
    .setExpirationTime(now + 3600)
    .sign(key);
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
};

function post(app: TestApp, headers: Record<string, string> = {}) {
  return inProcessFetch(mcpHandler(() => Promise.resolve(app)))(MCP_URL, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(initialize),
  });
}

describe('Entra ID mode', () => {
  it('publishes the protected resource metadata of /api/mcp', async () => {
    const reply = await callEndpoint(protectedResourceMetadataEndpoint, entraApp(), {
      path: '/api/oauth-protected-resource/mcp',
    });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(await reply.json<ProtectedResourceMetadata>()).toEqual({
      resource: MCP_URL,
      authorization_servers: [ISSUER],
      scopes_supported: [`api://${API_CLIENT_ID}/.default`],
      bearer_methods_supported: ['header'],
      resource_name: 'Long-term memory (MCP)',
    });
  });

  it('answers /api/mcp without a token 401 with the challenge that points at the metadata', async () => {
    const reply = await post(entraApp());
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${METADATA_URL}"`);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    // What an MCP client reads from it.
    expect(extractWWWAuthenticateParams(reply)).toEqual({ resourceMetadataUrl: new URL(METADATA_URL) });
  });

  it('answers a token Entra ID did not sign 401 with invalid_token and the reason', async () => {
    const { privateKey: forger } = await generateKeyPair('RS256');
    const reply = await post(entraApp(), { authorization: `Bearer ${await token(forger)}` });
    expect(reply.status).toBe(401);
    const challenge = extractWWWAuthenticateParams(reply);
    expect(challenge).toMatchObject({ resourceMetadataUrl: new URL(METADATA_URL), error: 'invalid_token' });
    expect(challenge.errorDescription).toMatch(/signature/i);
  });

  it("serves the SDK's client as the token's user", async () => {
    const app = entraApp();
    await storeFacts(
      app.fakes.facts,
      profileFact(OID, 'f1', [factSource('11111111-1111-4111-8111-111111111111', 1)], {
        statement: 'Likes Lisbon.',
      }),
    );
    await storeFacts(
      app.fakes.facts,
      profileFact('user_001', 'f2', [factSource('11111111-1111-4111-8111-111111111111', 1)]),
    );
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(MCP_URL), {
        fetch: inProcessFetch(mcpHandler(() => Promise.resolve(app))),
        requestInit: { headers: { authorization: `Bearer ${await token()}` } },
      }),
    );
    const result = await client.callTool({ name: 'get_user_profile', arguments: {} });
    expect(result.structuredContent).toMatchObject({
      profile: { interests: [{ factId: 'f1', statement: 'Likes Lisbon.' }] },
    });
    await client.close();
  });
});

describe('other modes', () => {
  it('publish no metadata, and a 401 from /api/mcp has no bearer challenge', async () => {
    const app = createTestApp();
    const reply = await callEndpoint(protectedResourceMetadataEndpoint, app, {
      path: '/api/oauth-protected-resource/mcp',
    });
    expect(reply.status).toBe(404);
    const unauthenticated = await post(app);
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toBeNull();
  });

  it('refuses a body over the limit with 413', async () => {
    const app = createTestApp();
    const reply = await inProcessFetch(mcpHandler(() => Promise.resolve(app)))(MCP_URL, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-ms-client-principal-id': 'user_001',
      },
      body: JSON.stringify({ ...initialize, padding: 'x'.repeat(200 * 1024) }),
    });
    expect(reply.status).toBe(413);
  });

  it('refuses a JSON-RPC message nested deeper than the limit with 400, before the SDK parses it', async () => {
    const app = createTestApp();
    const reply = await inProcessFetch(mcpHandler(() => Promise.resolve(app)))(MCP_URL, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-ms-client-principal-id': 'user_001',
      },
      body: JSON.stringify({ ...initialize, params: { ...initialize.params, deep: [] } }).replace(
        '"deep":[]',
        `"deep":${'['.repeat(5_000)}${']'.repeat(5_000)}`,
      ),
    });
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(await reply.json()).toMatchObject({
      detail: expect.stringMatching(/nested deeper than 64 levels/),
    });
  });
});
