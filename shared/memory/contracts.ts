// The memory area's contracts. The memory worker (a later issue) consumes `message-completed`
// (shared/chat/contracts.ts) on the `memory` subscription and keeps conversation summaries and the user's profile;
// its documents, tools' inputs and outputs and HTTP bodies are declared here when it lands.
import type { ContainerSpec } from '../cosmos/container-spec.js';

/** The subscription of `message-completed` the memory worker will read. */
export const MEMORY_SUBSCRIPTION = 'memory';

export const memoryContainers: readonly ContainerSpec[] = [];
