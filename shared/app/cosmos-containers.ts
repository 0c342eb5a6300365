// The Cosmos DB database and every container the product uses, gathered from the areas' contracts. The local
// runtime provisions them from this list and infra/ declares the same (the drift test checks the generated file).
import { chatContainers } from '../chat/contracts/documents.js';
import { historyContainers } from '../history/contracts.js';
import { knowledgeContainers } from '../knowledge/contracts.js';
import { mcpContainers } from '../mcp/contracts.js';
import { memoryContainers } from '../memory/contracts.js';
import { quotaContainers } from '../quota/contracts.js';
import { sharingContainers } from '../sharing/contracts.js';
import { streamingContainers } from '../streaming/contracts.js';
import { usageContainers } from '../usage/contracts.js';
import { assistantsContainers } from '../assistants/contracts.js';
import { projectsContainers } from '../projects/contracts.js';
import { accountContainers } from '../account/contracts.js';
import { apiKeysContainers } from '../api-keys/contracts.js';
import type { ContainerSpec } from '../cosmos/container-spec.js';

export const COSMOS_DATABASE = 'chat';

export const cosmosContainers: readonly ContainerSpec[] = [
  ...chatContainers,
  ...streamingContainers,
  ...historyContainers,
  ...memoryContainers,
  ...knowledgeContainers,
  ...quotaContainers,
  ...usageContainers,
  ...sharingContainers,
  ...mcpContainers,
  ...assistantsContainers,
  ...projectsContainers,
  ...accountContainers,
  ...apiKeysContainers,
];
