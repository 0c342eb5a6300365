import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../llm/llm-gateway.js';
import { createTestApp } from '../../test/support/in-memory-ports.js';
import { connectNeedOf } from '../streaming/tool-connect.js';
import { McpAuthorizationRequiredError, type McpConnector } from './mcp-connector.js';
import { createMcpServer } from './mcp-servers.js';
import type { McpServices } from './mcp-services.js';
import type { OperatorMcpServer } from './settings.js';
import { McpTurnTools, specTokens, withinBudget } from './turn-tools.js';

const spec = (name: string, descriptionChars: number): ToolSpec => ({
  name,
  description: 'd'.repeat(descriptionChars),
  parameters: { type: 'object' },
});

describe("a turn's MCP tools", () => {
  it('keeps tools in order while they fit both the count and the token budget', () => {
    const specs = [spec('a', 400), spec('b', 400), spec('c', 40), spec('d', 40)];
    const cost = specTokens(spec('a', 400));
    expect(withinBudget(specs, { tools: 10, tokens: cost + 20 })).toEqual({
      kept: [specs[0], specs[2]],
      left: ['b', 'd'],
    });
    expect(withinBudget(specs, { tools: 1, tokens: 100_000 }).left).toEqual(['b', 'c', 'd']);
    expect(withinBudget(specs, { tools: 0, tokens: 100_000 }).kept).toEqual([]);
  });

  it('goes on without MCP tools, saying why, when the servers cannot be read', async () => {
    const app = createTestApp();
    const tools = new McpTurnTools(
      {
        ...app.mcp,
        store: {
          ...app.mcp.store,
          list: () => Promise.reject(new Error('Cosmos DB failed reading MCP servers.')),
        },
      },
      { cacheMs: 0 },
    );
    const warnings: string[] = [];
    expect(
      await tools.specs({ userId: 'user_001' }, { warn: (message: string) => warnings.push(message) }),
    ).toEqual([]);
    expect(warnings).toEqual(['MCP tools left out of the turn: Cosmos DB failed reading MCP servers.']);
  });

  it("offers an operator's server given to a group only to a turn whose caller is in it, and calls it only then", async () => {
    const app = createTestApp();
    const wiki: OperatorMcpServer = {
      id: 'mcp-op-wiki',
      name: 'wiki',
      url: 'http://127.0.0.1:9/mcp',
      transport: 'streamable-http',
      headers: {},
      tools: {},
      approval: 'never',
      audience: { everyone: false, users: [], groups: ['g-writers'] },
    };
    const called: string[] = [];
    const connector: McpConnector = {
      listTools: () =>
        Promise.resolve({
          tools: [{ name: 'search', inputSchema: { type: 'object' }, readOnly: true }],
          listed: 1,
        }),
      callTool: (_target, name) => {
        called.push(name);
        return Promise.resolve({ text: 'found', isError: false, truncated: false });
      },
    };
    const tools = new McpTurnTools(
      {
        ...app.mcp,
        connector,
        operatorTools: new Map(),
        config: { ...app.mcp.config, operatorServers: [wiki] },
      },
      { cacheMs: 0 },
    );
    const names = async (who: { userId: string; groups?: string[] }) =>
      (await tools.specs(who)).map((one) => one.name);

    expect(await names({ userId: 'user_001', groups: ['g-readers', 'g-writers'] })).toEqual([
      'mcp__wiki__search',
    ]);
    expect(await names({ userId: 'user_002', groups: ['g-readers'] })).toEqual([]);
    expect(await names({ userId: 'user_002' })).toEqual([]);

    const call = { id: 'call_1', name: 'mcp__wiki__search', arguments: '{}' };
    expect(await tools.execute(call, { userId: 'user_002' })).toMatchObject({ isError: true });
    expect(called).toEqual([]);
    expect(await tools.execute(call, { userId: 'user_001', groups: ['g-writers'] })).toEqual({
      result: 'found',
      isError: false,
    });
    expect(called).toEqual(['search']);
  });

  it('offers and calls only the servers a conversation names, when it names its tools', async () => {
    const app = createTestApp();
    const server = (name: string): OperatorMcpServer => ({
      id: `mcp-op-${name}`,
      name,
      url: 'http://127.0.0.1:9/mcp',
      transport: 'streamable-http',
      headers: {},
      tools: {},
      approval: 'never',
      audience: { everyone: true, users: [], groups: [] },
    });
    const called: string[] = [];
    const connector: McpConnector = {
      listTools: () =>
        Promise.resolve({
          tools: [{ name: 'search', inputSchema: { type: 'object' }, readOnly: true }],
          listed: 1,
        }),
      callTool: (target, name) => {
        called.push(`${target.url}#${name}`);
        return Promise.resolve({ text: 'found', isError: false, truncated: false });
      },
    };
    const tools = new McpTurnTools(
      {
        ...app.mcp,
        connector,
        operatorTools: new Map(),
        config: { ...app.mcp.config, operatorServers: [server('wiki'), server('docs')] },
      },
      { cacheMs: 0 },
    );
    const names = async (servers?: string[]) =>
      (await tools.specs({ userId: 'user_001', ...(servers ? { servers } : {}) })).map((one) => one.name);

    expect(await names()).toEqual(['mcp__wiki__search', 'mcp__docs__search']);
    expect(await names(['mcp-op-docs'])).toEqual(['mcp__docs__search']);
    expect(await names([])).toEqual([]);

    const wiki = { id: 'call_1', name: 'mcp__wiki__search', arguments: '{}' };
    expect(await tools.execute(wiki, { userId: 'user_001', servers: ['mcp-op-docs'] })).toEqual({
      result: JSON.stringify({
        error:
          'Not run: tool "mcp__wiki__search" is not offered in this conversation (its assistant names its MCP servers).',
      }),
      isError: true,
    });
    expect(called).toEqual([]);
    expect(await tools.execute(wiki, { userId: 'user_001', servers: ['mcp-op-wiki'] })).toMatchObject({
      isError: false,
    });
    expect(called).toHaveLength(1);
  });

  /** The test app's MCP services on `connector`, with one server of user_001's, its tools not listed yet. */
  async function ownServer(connector: McpConnector): Promise<{ services: McpServices; serverId: string }> {
    const app = createTestApp();
    const services: McpServices = { ...app.mcp, connector };
    const { id } = await createMcpServer(
      services,
      { userId: 'user_001' },
      { name: 'crm', url: 'https://crm.example.com/mcp', headers: {} },
    );
    return { services, serverId: id };
  }

  it("lists a server's tools once for the turns that need them at the same time", async () => {
    const listed: string[] = [];
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { services } = await ownServer({
      listTools: async (target) => {
        listed.push(target.url);
        await held;
        return { tools: [{ name: 'lookup', inputSchema: { type: 'object' }, readOnly: true }], listed: 1 };
      },
      callTool: () => Promise.reject(new Error('not called')),
    });
    const tools = new McpTurnTools(services, { cacheMs: 0 });
    const turns = [1, 2, 3].map(() => tools.specs({ userId: 'user_001' }));
    // Every turn is waiting on the one listing before it answers.
    await new Promise((resolve) => setImmediate(resolve));
    expect(listed).toEqual(['https://crm.example.com/mcp']);
    release();
    for (const specs of await Promise.all(turns))
      expect(specs.map((one) => one.name)).toEqual(['mcp__crm__lookup']);
    expect(listed).toHaveLength(1);
    // The next turn reads the list that listing kept: still one request to the server.
    expect((await tools.specs({ userId: 'user_001' })).map((one) => one.name)).toEqual(['mcp__crm__lookup']);
    expect(listed).toHaveLength(1);
  });

  it('lists again after a listing failed, and tells each waiting turn why its server was left out', async () => {
    let fail = true;
    let listed = 0;
    const { services, serverId } = await ownServer({
      listTools: () => {
        listed++;
        return fail
          ? Promise.reject(new Error('the server did not answer'))
          : Promise.resolve({ tools: [{ name: 'lookup', inputSchema: {}, readOnly: true }], listed: 1 });
      },
      callTool: () => Promise.reject(new Error('not called')),
    });
    const tools = new McpTurnTools(services, { cacheMs: 0 });
    const warnings: string[] = [];
    const log = { warn: (message: string) => warnings.push(message) };
    const [first, second] = await Promise.all([
      tools.specs({ userId: 'user_001' }, log),
      tools.specs({ userId: 'user_001' }, log),
    ]);
    expect([first, second, listed]).toEqual([[], [], 1]);
    expect(warnings).toEqual([
      `MCP server ${serverId} left out of the turn: the server did not answer`,
      `MCP server ${serverId} left out of the turn: the server did not answer`,
    ]);
    fail = false;
    expect((await tools.specs({ userId: 'user_001' })).map((one) => one.name)).toEqual(['mcp__crm__lookup']);
    expect(listed).toBe(2);
  });

  it('offers a server the user has not connected as one tool that shows them Connect', async () => {
    const called: string[] = [];
    const { services, serverId } = await ownServer({
      listTools: () => Promise.reject(new McpAuthorizationRequiredError('crm.example.com')),
      callTool: (_target, name) => {
        called.push(name);
        return Promise.resolve({ text: 'ran', isError: false, truncated: false });
      },
    });
    const tools = new McpTurnTools(services, { cacheMs: 0 });
    const specs = await tools.specs({ userId: 'user_001' });
    expect(specs.map((one) => one.name)).toEqual(['mcp__crm__connect_account']);
    expect(specs[0]?.description).toContain('has not connected their account to the MCP server "crm"');
    const call = { id: 'call_1', name: 'mcp__crm__connect_account', arguments: '{}' };
    // It asks for no yes: it runs nothing on the server.
    expect(await tools.approval(call, { userId: 'user_001' })).toBeUndefined();
    const outcome = await tools.execute(call, { userId: 'user_001' });
    expect(outcome).toMatchObject({ isError: true, connect: { serverId, serverName: 'crm' } });
    // The stored result alone says which server to connect (history keeps only the result).
    expect(connectNeedOf(outcome.result)).toEqual({ serverId, serverName: 'crm' });
    expect(called).toEqual([]);
  });

  it('lists a server again once its kept list is past its time, and keeps the earlier one while it cannot', async () => {
    let tool = 'lookup';
    let fail = false;
    let listed = 0;
    const { services, serverId } = await ownServer({
      listTools: () => {
        listed++;
        return fail
          ? Promise.reject(new Error('the server did not answer'))
          : Promise.resolve({ tools: [{ name: tool, inputSchema: {}, readOnly: true }], listed: 1 });
      },
      callTool: () => Promise.reject(new Error('not called')),
    });
    let clock = new Date();
    const tools = new McpTurnTools({ ...services, now: () => clock }, { cacheMs: 0 });
    const warnings: string[] = [];
    const names = async () =>
      (await tools.specs({ userId: 'user_001' }, { warn: (message: string) => warnings.push(message) })).map(
        (one) => one.name,
      );
    expect(await names()).toEqual(['mcp__crm__lookup']);
    // Within MCP_TOOLS_CACHE_SECONDS the kept list serves.
    clock = new Date(clock.getTime() + services.config.toolsCacheMs - 1_000);
    tool = 'search';
    expect(await names()).toEqual(['mcp__crm__lookup']);
    expect(listed).toBe(1);
    // Past it, the server is listed again.
    clock = new Date(Date.now() + services.config.toolsCacheMs + 1_000);
    expect(await names()).toEqual(['mcp__crm__search']);
    expect(listed).toBe(2);
    // A server that cannot list past that time keeps offering its earlier list, saying so.
    clock = new Date(Date.now() + 2 * services.config.toolsCacheMs + 2_000);
    fail = true;
    expect(await names()).toEqual(['mcp__crm__search']);
    expect(listed).toBe(3);
    expect(warnings).toEqual([
      `MCP server ${serverId} offers its earlier tool list: the server did not answer`,
    ]);
  });
});
