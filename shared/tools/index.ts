// The tools of a chat turn, in one registry; tools that later features bring (memory, history, knowledge)
// are added here.
import { addNumbersTool } from './add-numbers.js';
import { ToolRegistry } from './tool-registry.js';

export { ToolRegistry, defineTool } from './tool-registry.js';
export type { ToolContext, ToolDefinition, ToolOutcome, ToolRegistryOptions } from './tool-registry.js';

export function createChatTools(): ToolRegistry {
  return new ToolRegistry([addNumbersTool]);
}
