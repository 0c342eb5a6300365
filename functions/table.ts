// The one table of function definitions, read by the Functions host registration (index.ts) and by the
// local runtime. A new area adds its file's definitions here.
import { accountFunctions } from './account.js';
import { apiKeyFunctions } from './api-keys.js';
import { attachmentFunctions } from './attachments.js';
import { chatTurnFunctions } from './chat-turn.js';
import { chatFunctions } from './chat.js';
import { clientConfigFunctions } from './client-config.js';
import type { FunctionDefinition } from './definition.js';
import { healthFunctions } from './health.js';
import { historyFunctions } from './history.js';
import { historyApiFunctions } from './history-api.js';
import { knowledgeFunctions } from './knowledge.js';
import { assistantFunctions } from './assistants.js';
import { mcpFunctions } from './mcp.js';
import { mcpServerFunctions } from './mcp-servers.js';
import { projectFunctions } from './projects.js';
import { modelFunctions } from './models.js';
import { openApiFunctions } from './openapi.js';
import { shareFunctions } from './shares.js';
import { memoryApiFunctions } from './memory-api.js';
import { memoryFunctions } from './memory.js';
import { memoryTransferFunctions } from './memory-transfer.js';
import { openAiFunctions } from './openai-api.js';
import { openAiResponseFunctions } from './openai-responses.js';
import { streamFunctions } from './stream.js';
import { traceFunction } from './traced-functions.js';
import { uiChatFunctions } from './ui-chat.js';
import { usageFunctions } from './usage.js';

// Every trigger runs in its span (a no-op unless telemetry is set up).
export const functionDefinitions: readonly FunctionDefinition[] = [
  ...healthFunctions,
  ...chatFunctions,
  ...modelFunctions,
  ...assistantFunctions,
  ...projectFunctions,
  ...streamFunctions,
  ...uiChatFunctions,
  ...openAiFunctions,
  ...openAiResponseFunctions,
  ...chatTurnFunctions,
  ...historyFunctions,
  ...historyApiFunctions,
  ...shareFunctions,
  ...memoryFunctions,
  ...memoryApiFunctions,
  ...memoryTransferFunctions,
  ...knowledgeFunctions,
  ...attachmentFunctions,
  ...usageFunctions,
  ...mcpFunctions,
  ...mcpServerFunctions,
  ...clientConfigFunctions,
  ...accountFunctions,
  ...apiKeyFunctions,
  // The API's own description reads this table when asked, so it lists itself too.
  ...openApiFunctions(() => functionDefinitions),
].map(traceFunction);
