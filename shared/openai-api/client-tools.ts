// The client's own tools of a Chat Completions request, as the turn offers them: a name the turn's own tools use (a
// built-in tool, or the `mcp__` names of MCP servers' tools) is refused, so a call always means one tool.
import { ValidationError } from '../errors.js';
import type { ToolSpec } from '../llm/llm-gateway.js';
import { MCP_TOOL_PREFIX } from '../mcp/tool-names.js';
import type { ClientTool } from './contracts.js';

export function clientToolsOf(
  tools: readonly ClientTool[] | undefined,
  isBuiltIn: (name: string) => boolean,
): ToolSpec[] | undefined {
  if (tools === undefined || tools.length === 0) return undefined;
  const names = tools.map((tool) => tool.function.name);
  const refuse = (problem: string) =>
    new ValidationError(`Invalid chat completion request: ${problem}.`, [
      { path: 'tools', message: problem },
    ]);
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice !== undefined) throw refuse(`tool "${twice}" is given twice`);
  const taken = names.find((name) => isBuiltIn(name) || name.startsWith(MCP_TOOL_PREFIX));
  if (taken !== undefined)
    throw refuse(
      `tool "${taken}" has the name of a tool this service runs itself (a built-in tool, or an MCP server's mcp__ tool): rename it`,
    );
  return tools.map((tool) => ({
    name: tool.function.name,
    description: tool.function.description ?? '',
    parameters: tool.function.parameters ?? { type: 'object', properties: {} },
  }));
}
