// The OAuth use-cases over the in-memory store and a scripted authorizer: the callback's state is this service's,
// for its server, single use and expiring; tokens are sealed per user and server and never stored in clear.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryMcpServerStore } from '../../test/support/in-memory-mcp.js';
import type { McpAuthorizer, McpConnector } from './mcp-connector.js';
import {
  decodeState,
  encodeState,
  finishMcpOAuth,
  OAUTH_STATE_TTL_MS,
  openGrant,
  startMcpOAuth,
  withGrant,
} from './mcp-oauth.js';
import { createMcpServer, getMcpServer, type McpServices } from './mcp-servers.js';
import { createSecretBox } from './secret-box.js';

const ORIGIN = 'https://chat.example.com';
const TOKEN = 'at-7c1e0b2f9d';

function services(now: { at: number }) {
  const store = new MemoryMcpServerStore();
  const redeemed: { code: string; verifier: string }[] = [];
  const authorizer: McpAuthorizer = {
    start: (_target, grant, { state }) =>
      Promise.resolve({
        authorizationUrl: `https://as.example.com/authorize?state=${state}`,
        verifier: 'verifier-1',
        grant: { ...grant, client: { client_id: 'c1' }, redirectUrl: 'r' },
      }),
    finish: (_target, grant, { code, verifier }) => {
      redeemed.push({ code, verifier });
      return Promise.resolve({ ...grant, tokens: { access_token: TOKEN, token_type: 'Bearer' } });
    },
  };
  const mcp: McpServices = {
    store,
    connector: {} as McpConnector,
    authorizer,
    box: createSecretBox(randomBytes(32)),
    config: {
      operatorServers: [],
      secretsKey: undefined,
      allowedHosts: [],
      toolTimeoutMs: 1_000,
      toolOutputChars: 1_000,
      toolsCacheMs: 0,
      toolsPerTurn: 10,
      toolSchemaTokens: 1_000,
      approvalTimeoutSeconds: 3_600,
    },
    operatorTools: new Map(),
    now: () => new Date(now.at),
  };
  return { mcp, store, redeemed };
}

async function started(now = { at: Date.parse('2026-01-01T00:00:00Z') }) {
  const fixture = services(now);
  const server = await createMcpServer(
    fixture.mcp,
    { userId: 'user_001' },
    { name: 'notes', url: 'https://n/mcp' },
  );
  const { authorizationUrl } = await startMcpOAuth(fixture.mcp, { userId: 'user_001' }, server.id, ORIGIN);
  const state = new URL(authorizationUrl).searchParams.get('state') ?? '';
  return { ...fixture, now, serverId: server.id, state };
}

describe('connecting an MCP server with OAuth', () => {
  it('redeems the state once, with the verifier it was started with, and keeps the tokens sealed', async () => {
    const { mcp, store, redeemed, serverId, state } = await started();
    expect(await finishMcpOAuth(mcp, serverId, { state, code: 'code-1' }, ORIGIN)).toEqual({
      ok: true,
      userId: 'user_001',
    });
    expect(redeemed).toEqual([{ code: 'code-1', verifier: 'verifier-1' }]);
    expect(await finishMcpOAuth(mcp, serverId, { state, code: 'code-1' }, ORIGIN)).toMatchObject({
      ok: false,
      reason: 'invalid_state',
    });
    expect(redeemed).toHaveLength(1);
    const held = (await store.getOAuth('user_001', serverId))?.grant;
    expect(JSON.stringify(held)).not.toContain(TOKEN);
    expect(openGrant(mcp.box, held).tokens?.access_token).toBe(TOKEN);
    expect((await getMcpServer(mcp, { userId: 'user_001' }, serverId)).authorization).toBe('connected');
    // The sealed grant does not open as another user's.
    expect(() =>
      openGrant(mcp.box, held === undefined ? undefined : { ...held, userId: 'user_002' }),
    ).toThrow();
  });

  it('refuses a state for another server, a forged one, and one past its time', async () => {
    const { mcp, now, serverId, state } = await started();
    expect(await finishMcpOAuth(mcp, 'mcp-0000000000000000', { state, code: 'c' }, ORIGIN)).toMatchObject({
      reason: 'invalid_state',
    });
    const forged = encodeState(createSecretBox(randomBytes(32)), {
      u: 'user_001',
      s: serverId,
      n: 'x',
      e: 1e15,
    });
    expect(decodeState(mcp.box, forged)).toBeUndefined();
    expect(await finishMcpOAuth(mcp, serverId, { state: forged, code: 'c' }, ORIGIN)).toMatchObject({
      reason: 'invalid_state',
    });
    now.at += OAUTH_STATE_TTL_MS + 1;
    expect(await finishMcpOAuth(mcp, serverId, { state, code: 'c' }, ORIGIN)).toMatchObject({
      reason: 'expired',
    });
  });

  it("ends the authorization when the user refuses consent, and does not start on another user's server", async () => {
    const { mcp, redeemed, serverId, state } = await started();
    expect(await finishMcpOAuth(mcp, serverId, { state, error: 'access_denied' }, ORIGIN)).toMatchObject({
      reason: 'denied',
    });
    expect(redeemed).toEqual([]);
    await expect(startMcpOAuth(mcp, { userId: 'user_002' }, serverId, ORIGIN)).rejects.toMatchObject({
      status: 404,
    });
  });

  it('keeps tokens another call refreshed while a second call found its own copy refused', async () => {
    const { mcp, store, serverId, state } = await started();
    await finishMcpOAuth(mcp, serverId, { state, code: 'code-1' }, ORIGIN);
    const base = { url: 'https://n/mcp', transport: 'streamable-http' as const, headers: {} };
    const first = await withGrant(mcp, 'user_001', serverId, base);
    const second = await withGrant(mcp, 'user_001', serverId, base);
    // The first refreshes; the second's refresh token was rotated away, so it drops its copy and asks to connect.
    await first.oauth?.save({
      ...first.oauth.grant,
      tokens: { access_token: 'at-new', token_type: 'Bearer' },
    });
    const { tokens: _dropped, ...withoutTokens } = second.oauth?.grant ?? {};
    await second.oauth?.save(withoutTokens);
    await second.oauth?.required();
    const held = (await store.getOAuth('user_001', serverId))?.grant;
    expect(openGrant(mcp.box, held).tokens?.access_token).toBe('at-new');
    expect((await getMcpServer(mcp, { userId: 'user_001' }, serverId)).authorization).toBe('connected');
    // A call that found the newest tokens refused does drop them.
    const third = await withGrant(mcp, 'user_001', serverId, base);
    await third.oauth?.required();
    expect((await getMcpServer(mcp, { userId: 'user_001' }, serverId)).authorization).toBe('required');
  });
});
