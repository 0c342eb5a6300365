// The memory area's stores on Cosmos DB, each given the container it lives in. `ranking` says where summary search
// is ranked: Cosmos DB's own hybrid search (Azure), or in process (the local server, which lacks it).
import type { Database } from '@azure/cosmos';
import type { FullTextMode } from '../../search/full-text.js';
import { CONVERSATION_SUMMARIES_CONTAINER, PROFILE_FACTS_CONTAINER } from '../contracts.js';
import type { ConversationSummaries } from '../conversation-summaries.js';
import type { ProfileFacts } from '../profile-facts.js';
import { createCosmosConversationSummaries } from './cosmos-conversation-summaries.js';
import { createCosmosProfileFacts } from './cosmos-profile-facts.js';

export interface MemoryStores {
  summaries: ConversationSummaries;
  facts: ProfileFacts;
}

export function createMemoryStores(
  database: Database,
  options: { ranking: FullTextMode; cachedSummaries?: number },
): MemoryStores {
  return {
    summaries: createCosmosConversationSummaries(
      database.container(CONVERSATION_SUMMARIES_CONTAINER),
      options,
    ),
    facts: createCosmosProfileFacts(database.container(PROFILE_FACTS_CONTAINER)),
  };
}
