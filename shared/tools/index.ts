// The tools of a chat turn, in one registry, given the ports they read; tools that later features bring are
// added here.
import { addNumbersTool } from './add-numbers.js';
import { conversationSearchTool, type ConversationSearchDeps } from './conversation-search.js';
import { knowledgeSearchTool, type KnowledgeSearchDeps } from './knowledge-search.js';
import { pastConversationTools, type PastConversationDeps } from './past-conversation.js';
import { ToolRegistry, type ToolRegistryOptions } from './tool-registry.js';

export { ToolRegistry, cited, defineTool } from './tool-registry.js';
export type { ToolContext, ToolDefinition, ToolOutcome, ToolRegistryOptions } from './tool-registry.js';

export type ChatToolDeps = PastConversationDeps & ConversationSearchDeps & KnowledgeSearchDeps;

export function createChatTools(deps: ChatToolDeps, options: ToolRegistryOptions = {}): ToolRegistry {
  return new ToolRegistry(
    [addNumbersTool, ...pastConversationTools(deps), conversationSearchTool(deps), knowledgeSearchTool(deps)],
    options,
  );
}
