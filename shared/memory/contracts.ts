// The memory area's contracts. The memory worker (a later issue) consumes `message-completed`
// (shared/chat/contracts.ts) on the `memory` subscription and keeps conversation summaries and the user's profile;
// its documents, tools' inputs and outputs and HTTP bodies are declared here when it lands.
import { EMBEDDING, englishText, type ContainerSpec } from '../cosmos/container-spec.js';

/** The subscription of `message-completed` the memory worker will read. */
export const MEMORY_SUBSCRIPTION = 'memory';

export const CONVERSATION_SUMMARIES_CONTAINER = 'conversation-summaries';
export const PROFILE_FACTS_CONTAINER = 'profile-facts';

export const memoryContainers: readonly ContainerSpec[] = [
  {
    id: CONVERSATION_SUMMARIES_CONTAINER,
    partitionKeyPaths: ['/userId'],
    vectorEmbeddings: [EMBEDDING],
    vectorIndexes: [{ path: EMBEDDING.path, type: 'quantizedFlat' }],
    fullTextPaths: [englishText('/summary')],
    purpose:
      "Long-term memory: a summary of each past conversation (themes, persons, places, sentiment) with its embedding, searched within one user's summaries by vector, full text or both (hybrid).",
  },
  {
    id: PROFILE_FACTS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    purpose:
      "Long-term memory: the user's structured profile, one item per fact (preference, interest, knowledge, goal, ...) with its provenance and validity.",
  },
];
