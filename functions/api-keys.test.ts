// Personal API keys in process: real HttpRequest objects, the real use-cases and resolver over an in-memory store.
// Created once with the key, listed without it, revoked by their owner only, bounded per user, refused where a
// route does not take keys, and refused when the operator has them off.
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../shared/api-keys/api-keys.js';
import { defineEndpoint } from '../shared/http/endpoint.js';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { createApiKeyEndpoint, listApiKeysEndpoint, revokeApiKeyEndpoint } from './api-keys.js';
import { listSharesEndpoint } from './shares.js';

interface Created {
  id: string;
  key: string;
  prefix: string;
  name: string;
  expiresAt: string | null;
}

async function create(app: TestApp, userId: string, json: unknown = { name: 'laptop' }) {
  return callEndpoint(createApiKeyEndpoint, app, { headers: asUser(userId), json });
}

/** A route that takes keys, answering who the caller is. */
const whoAmI = defineEndpoint<TestApp>()({
  name: 'whoAmI',
  route: 'v1/whoami',
  methods: ['GET'],
  summary: 'test',
  auth: 'caller',
  apiKeys: true,
  handle: ({ caller }) => Promise.resolve({ status: 200, body: caller }),
});

describe('POST/GET/DELETE /api/api-keys', () => {
  it('answers the key once, lists it without the key, and the key acts as its owner', async () => {
    const app = createTestApp();
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const reply = await create(app, 'user_001', { name: 'laptop', expiresAt });
    expect(reply.status).toBe(201);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const created = await reply.json<Created>();
    expect(created).toMatchObject({ name: 'laptop', expiresAt, lastUsedAt: null });
    expect(created.key.startsWith(created.prefix)).toBe(true);

    const caller = await callEndpoint(whoAmI, app, { headers: { authorization: `Bearer ${created.key}` } });
    expect(await caller.json()).toEqual({ userId: 'user_001', identityProvider: 'api-key' });

    const list = await callEndpoint(listApiKeysEndpoint, app, { headers: asUser('user_001') });
    const text = await list.text();
    expect(text).not.toContain(created.key);
    expect(text).not.toContain(created.key.slice(16));
    const body = JSON.parse(text) as { keys: { id: string; lastUsedAt: string | null }[]; maxKeys: number };
    expect(body.maxKeys).toBe(10);
    expect(body.keys.map((key) => key.id)).toEqual([created.id]);
    expect(body.keys[0]?.lastUsedAt).not.toBeNull();
    // Another user sees none of it.
    const other = await callEndpoint(listApiKeysEndpoint, app, { headers: asUser('user_002') });
    expect((await other.json<{ keys: unknown[] }>()).keys).toEqual([]);
  });

  it("revokes the owner's key only: another user's is the same 404 as an unknown one", async () => {
    const app = createTestApp();
    const created = await (await create(app, 'user_001')).json<Created>();
    const revoke = (userId: string, id: string) =>
      callEndpoint(revokeApiKeyEndpoint, app, {
        headers: asUser(userId),
        params: { id },
        path: `/api/api-keys/${id}`,
      });
    expect((await revoke('user_002', created.id)).status).toBe(404);
    expect((await revoke('user_001', 'AAAAAAAAAAAA')).status).toBe(404);
    expect((await revoke('user_001', '../x')).status).toBe(400);
    const beforeRevoke = await callEndpoint(whoAmI, app, {
      headers: { authorization: `Bearer ${created.key}` },
    });
    expect(beforeRevoke.status).toBe(200);
    expect((await revoke('user_001', created.id)).status).toBe(204);
    const after = await callEndpoint(whoAmI, app, { headers: { authorization: `Bearer ${created.key}` } });
    expect(after.status).toBe(401);
    expect(await after.text()).not.toContain(created.key);
  });

  it('bounds how many keys a user holds, naming the limit', async () => {
    const app = createTestApp({ settings: { API_KEYS_MAX_PER_USER: '2' } });
    expect((await create(app, 'user_001')).status).toBe(201);
    expect((await create(app, 'user_001')).status).toBe(201);
    const third = await create(app, 'user_001');
    expect(third.status).toBe(409);
    expect(await third.text()).toContain('API_KEYS_MAX_PER_USER=2');
    // Another user's count is their own.
    expect((await create(app, 'user_002')).status).toBe(201);
  });

  it('refuses an expiry in the past, unknown fields and an empty name', async () => {
    const app = createTestApp();
    expect((await create(app, 'user_001', { name: 'x', expiresAt: '2000-01-01T00:00:00Z' })).status).toBe(
      400,
    );
    expect((await create(app, 'user_001', { name: 'x', key: 'cmk_mine' })).status).toBe(400);
    expect((await create(app, 'user_001', { name: '  ' })).status).toBe(400);
  });

  it('refuses a key on a route that does not take keys, saying where keys go', async () => {
    const app = createTestApp();
    const { key } = await (await create(app, 'user_001')).json<Created>();
    const reply = await callEndpoint(listSharesEndpoint, app, {
      headers: { authorization: `Bearer ${key}` },
      params: { userId: 'user_001' },
      path: '/api/history/users/user_001/shares',
    });
    expect(reply.status).toBe(401);
    expect(await reply.text()).toMatch(/accepted only by the OpenAI-compatible API/);
    const keysRoute = await callEndpoint(listApiKeysEndpoint, app, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(keysRoute.status).toBe(401);
  });

  it('with API_KEYS=off: creating is 403, a key is refused, and an owner can still list and revoke', async () => {
    const on = createTestApp();
    const { key, id } = await (await create(on, 'user_001')).json<Created>();
    const off = createTestApp({ settings: { API_KEYS: 'off' } });
    // The same store, as after the operator turned keys off.
    const entry = await on.apiKeys.services.store.entry('user_001', id);
    const credential = await on.apiKeys.services.store.credential(id);
    if (entry === undefined || credential === undefined) throw new Error('the key was not stored');
    await off.apiKeys.services.store.create(entry, credential);
    const refused = await create(off, 'user_001');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'api_keys_off' });
    const used = await callEndpoint(whoAmI, off, { headers: { authorization: `Bearer ${key}` } });
    expect(used.status).toBe(401);
    expect(await used.text()).toContain('API_KEYS=on');
    const list = await callEndpoint(listApiKeysEndpoint, off, { headers: asUser('user_001') });
    expect((await list.json<{ keys: unknown[] }>()).keys).toHaveLength(1);
  });

  it('in app-service mode, a key route trusts no principal headers while keys are on', async () => {
    const app = createTestApp({ settings: { AUTH_MODE: 'app-service' } });
    const principal = Buffer.from(JSON.stringify({ claims: [] })).toString('base64');
    const reply = await callEndpoint(whoAmI, app, {
      headers: { 'x-ms-client-principal-id': 'user_001', 'x-ms-client-principal': principal },
    });
    expect(reply.status).toBe(401);
    expect(await reply.text()).toMatch(/takes a personal API key/);
  });
});

describe('API keys beside Entra ID tokens', () => {
  it('takes a key on a key route before any token check, and refuses it elsewhere', async () => {
    const app = createTestApp({
      settings: {
        AUTH_MODE: 'entra',
        AUTH_ENTRA_TENANT_ID: '11111111-1111-1111-1111-111111111111',
        AUTH_ENTRA_AUDIENCE: '22222222-2222-2222-2222-222222222222',
      },
    });
    const { key } = await createApiKey(
      app.apiKeys.services,
      { userId: '33333333-3333-3333-3333-333333333333', identityProvider: 'aad' },
      { name: 'script' },
    );
    const reply = await callEndpoint(whoAmI, app, { headers: { authorization: `Bearer ${key}` } });
    expect(await reply.json()).toEqual({
      userId: '33333333-3333-3333-3333-333333333333',
      identityProvider: 'api-key',
    });
    const refused = await callEndpoint(listApiKeysEndpoint, app, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toMatch(/accepted only by/);
  });
});
