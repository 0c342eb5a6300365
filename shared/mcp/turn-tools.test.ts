import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../llm/llm-gateway.js';
import { createTestApp } from '../../test/support/in-memory-ports.js';
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
    expect(await tools.specs('user_001', { warn: (message: string) => warnings.push(message) })).toEqual([]);
    expect(warnings).toEqual(['MCP tools left out of the turn: Cosmos DB failed reading MCP servers.']);
  });
});
