// MCP servers in process: added, listed, changed and removed by their owner only; header values sealed and never
// shown; tools listed from a real MCP server on loopback and cached; refused addresses refused before connecting.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { operatorServersFor } from '../shared/mcp/mcp-servers.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { startTestMcpServer, type TestMcpServer } from '../test/support/test-mcp-server.js';
import {
  createMcpServerEndpoint,
  deleteMcpServerEndpoint,
  getMcpServerEndpoint,
  listMcpServersEndpoint,
  mcpServerToolsEndpoint,
  updateMcpServerEndpoint,
} from './mcp-servers.js';

const SECRET = 'Bearer sk-test-7f3a9c1e5b';
const KEY = randomBytes(32).toString('base64');

let mcp: TestMcpServer;
beforeAll(async () => {
  mcp = await startTestMcpServer((server) => {
    server.registerTool(
      'get_weather',
      {
        description: 'The weather in a city.',
        inputSchema: z.object({ city: z.string() }),
        annotations: { readOnlyHint: true },
      },
      ({ city }) => ({ content: [{ type: 'text', text: `Sunny in ${city}` }] }),
    );
    server.registerTool(
      'delete_repo',
      { description: 'Deletes a repository.', inputSchema: z.object({ repo: z.string() }) },
      () => ({ content: [{ type: 'text', text: 'deleted' }] }),
    );
  });
});
afterAll(() => mcp.stop());

function app(settings: Record<string, string> = {}, lookup?: Parameters<typeof createTestApp>[0]): TestApp {
  return createTestApp({ settings: { MCP_SECRETS_KEY: KEY, ...settings }, ...lookup });
}

async function add(testApp: TestApp, userId: string, body: Record<string, unknown>) {
  return callEndpoint(createMcpServerEndpoint, testApp, { json: body, headers: asUser(userId) });
}

interface View {
  id: string;
  name: string;
  headerNames: string[];
  owner: string;
}

describe('MCP servers', () => {
  it('adds a server, seals its header values, and never shows them again', async () => {
    const testApp = app();
    const created = await add(testApp, 'user_001', {
      name: 'weather',
      url: mcp.url,
      headers: { Authorization: SECRET },
    });
    expect(created.status).toBe(201);
    const view = await created.json<View>();
    expect(view).toMatchObject({ name: 'weather', headerNames: ['Authorization'], owner: 'user' });
    expect(view.id).toMatch(/^mcp-[0-9a-f]{16}$/);
    expect(await created.text()).not.toContain('sk-test');
    expect(JSON.stringify([...testApp.fakes.mcpServers.items.values()])).not.toContain('sk-test');

    const listed = await callEndpoint(listMcpServersEndpoint, testApp, { headers: asUser('user_001') });
    expect(await listed.text()).not.toContain('sk-test');
    expect((await listed.json<{ servers: View[] }>()).servers.map((s) => s.name)).toEqual(['weather']);
  });

  it('lists the tools the server gives, sending the header, and keeps the list until it expires', async () => {
    const testApp = app();
    const view = await (
      await add(testApp, 'user_001', {
        name: 'weather',
        url: mcp.url,
        headers: { Authorization: SECRET },
        tools: { deny: ['delete_repo'] },
      })
    ).json<View>();
    const before = mcp.requests.length;
    const tools = await callEndpoint(mcpServerToolsEndpoint, testApp, {
      headers: asUser('user_001'),
      params: { serverId: view.id },
    });
    expect(tools.status).toBe(200);
    const body = await tools.json<{
      tools: { name: string; readOnly: boolean; offered: boolean; modelName?: string }[];
    }>();
    expect(body.tools).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'get_weather',
          readOnly: true,
          offered: true,
          modelName: 'mcp__weather__get_weather',
        }),
        expect.objectContaining({
          name: 'delete_repo',
          readOnly: false,
          needsApproval: true,
          offered: false,
        }),
      ]),
    );
    expect(mcp.requests.slice(before).some((r) => r.headers.authorization === SECRET)).toBe(true);
    const after = mcp.requests.length;
    await callEndpoint(mcpServerToolsEndpoint, testApp, {
      headers: asUser('user_001'),
      params: { serverId: view.id },
    });
    expect(mcp.requests.length).toBe(after);
  });

  it('offers every tool, and names the ones whose calls wait for the user, as the approval policy says', async () => {
    const testApp = app();
    const view = await (await add(testApp, 'user_001', { name: 'weather', url: mcp.url })).json<View>();
    const tools = async () => {
      const reply = await callEndpoint(mcpServerToolsEndpoint, testApp, {
        headers: asUser('user_001'),
        params: { serverId: view.id },
      });
      const listed = (
        await reply.json<{ tools: { name: string; offered: boolean; needsApproval?: boolean }[] }>()
      ).tools;
      return {
        offered: listed
          .filter((tool) => tool.offered)
          .map((tool) => tool.name)
          .sort(),
        needApproval: listed
          .filter((tool) => tool.needsApproval === true)
          .map((tool) => tool.name)
          .sort(),
      };
    };
    // By default only the tools the server does not mark read-only wait for a yes.
    expect(await tools()).toEqual({ offered: ['delete_repo', 'get_weather'], needApproval: ['delete_repo'] });
    await callEndpoint(updateMcpServerEndpoint, testApp, {
      headers: asUser('user_001'),
      params: { serverId: view.id },
      json: { approval: 'never' },
    });
    expect(await tools()).toEqual({ offered: ['delete_repo', 'get_weather'], needApproval: [] });
    await callEndpoint(updateMcpServerEndpoint, testApp, {
      headers: asUser('user_001'),
      params: { serverId: view.id },
      json: { approval: 'always' },
    });
    expect(await tools()).toEqual({
      offered: ['delete_repo', 'get_weather'],
      needApproval: ['delete_repo', 'get_weather'],
    });
  });

  it("answers another user's server as none: 404 for read, change, removal and tools", async () => {
    const testApp = app();
    const view = await (await add(testApp, 'user_001', { name: 'weather', url: mcp.url })).json<View>();
    const params = { serverId: view.id };
    const bob = asUser('user_002');
    expect((await callEndpoint(getMcpServerEndpoint, testApp, { headers: bob, params })).status).toBe(404);
    expect(
      (
        await callEndpoint(updateMcpServerEndpoint, testApp, {
          headers: bob,
          params,
          json: { enabled: false },
        })
      ).status,
    ).toBe(404);
    expect((await callEndpoint(deleteMcpServerEndpoint, testApp, { headers: bob, params })).status).toBe(404);
    expect((await callEndpoint(mcpServerToolsEndpoint, testApp, { headers: bob, params })).status).toBe(404);
    const listed = await callEndpoint(listMcpServersEndpoint, testApp, { headers: bob });
    expect((await listed.json<{ servers: View[] }>()).servers).toEqual([]);
    expect(
      (await callEndpoint(getMcpServerEndpoint, testApp, { headers: asUser('user_001'), params })).status,
    ).toBe(200);
  });

  it('changes and removes a server, and refuses a name already taken', async () => {
    const testApp = app();
    await add(testApp, 'user_001', { name: 'one', url: mcp.url });
    const two = await (
      await add(testApp, 'user_001', { name: 'two', url: mcp.url, headers: { 'X-Api-Key': 'k-1234567' } })
    ).json<View>();
    expect((await add(testApp, 'user_001', { name: 'one', url: mcp.url })).status).toBe(409);
    const params = { serverId: two.id };
    const alice = asUser('user_001');
    expect(
      (
        await callEndpoint(updateMcpServerEndpoint, testApp, {
          headers: alice,
          params,
          json: { name: 'one' },
        })
      ).status,
    ).toBe(409);
    const changed = await callEndpoint(updateMcpServerEndpoint, testApp, {
      headers: alice,
      params,
      json: { headers: null, approval: 'always' },
    });
    expect(await changed.json()).toMatchObject({ headerNames: [], approval: 'always' });
    expect((await callEndpoint(deleteMcpServerEndpoint, testApp, { headers: alice, params })).status).toBe(
      204,
    );
    expect((await callEndpoint(getMcpServerEndpoint, testApp, { headers: alice, params })).status).toBe(404);
  });

  it("lists the operator's servers for their audience only, read-only", async () => {
    const testApp = app({
      MCP_SERVERS: JSON.stringify([
        { name: 'everyone', url: mcp.url },
        { name: 'staff', url: mcp.url, for: ['group:staff-group', 'user_003'] },
      ]),
    });
    const names = async (userId: string) => {
      const reply = await callEndpoint(listMcpServersEndpoint, testApp, { headers: asUser(userId) });
      return (await reply.json<{ servers: View[] }>()).servers.map((s) => `${s.owner}:${s.name}`);
    };
    expect(await names('user_001')).toEqual(['operator:everyone']);
    expect(await names('user_003')).toEqual(['operator:everyone', 'operator:staff']);
    const change = await callEndpoint(updateMcpServerEndpoint, testApp, {
      headers: asUser('user_001'),
      params: { serverId: 'mcp-op-everyone' },
      json: { enabled: false },
    });
    expect(change.status).toBe(403);
    expect(
      (
        await callEndpoint(getMcpServerEndpoint, testApp, {
          headers: asUser('user_001'),
          params: { serverId: 'mcp-op-staff' },
        })
      ).status,
    ).toBe(404);
    expect((await add(testApp, 'user_001', { name: 'everyone', url: mcp.url })).status).toBe(409);
    // A group member (Entra ID's groups claim) gets the group's servers too.
    const member = operatorServersFor(testApp.config.mcp, { userId: 'user_004', groups: ['staff-group'] });
    expect(member.map((server) => server.name)).toEqual(['everyone', 'staff']);
  });

  it('refuses link-local and metadata addresses before connecting, and says so readably', async () => {
    const lookups: string[] = [];
    const testApp = app(
      {},
      {
        mcpLookup: (host) => {
          lookups.push(host);
          return Promise.resolve([{ address: '169.254.169.254', family: 4 }]);
        },
      },
    );
    for (const url of [
      'http://169.254.169.254/mcp',
      'http://metadata.test.invalid/mcp',
      'http://[::ffff:a9fe:a9fe]/mcp',
    ]) {
      const view = await (
        await add(testApp, 'user_001', {
          name: `s${lookups.length}${url.length}`,
          url,
          headers: { Authorization: SECRET },
        })
      ).json<View>();
      const reply = await callEndpoint(mcpServerToolsEndpoint, testApp, {
        headers: asUser('user_001'),
        params: { serverId: view.id },
      });
      expect(reply.status).toBe(502);
      const text = await reply.text();
      expect(text).toMatch(/169\.254\.169\.254|a9fe/);
      expect(text).not.toContain('sk-test');
      expect(JSON.stringify(reply.logged)).not.toContain('sk-test');
    }
    expect(lookups).toEqual(['metadata.test.invalid']);
  });

  it('cannot keep header values without a key, and says who must act', async () => {
    const reply = await add(createTestApp(), 'user_001', {
      name: 'weather',
      url: mcp.url,
      headers: { Authorization: SECRET },
    });
    expect(reply.status).toBe(503);
    expect(await reply.text()).toMatch(/MCP_SECRETS_KEY/);
  });
});
