// The knowledge area's contracts. Document ingestion and search (a later issue) declare here their queue message,
// their stored documents and chunks, the `search_knowledge_base` tool's input and output and their HTTP bodies.
import type { ContainerSpec } from '../cosmos/container-spec.js';

export const knowledgeContainers: readonly ContainerSpec[] = [];
