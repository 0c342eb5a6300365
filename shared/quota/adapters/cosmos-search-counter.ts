// The Cosmos DB adapter of SearchCounter: one document per user and minute in the `quotas` container, counted
// as the message counter is.
import type { Container } from '@azure/cosmos';
import { searchWindowDocumentSchema, searchWindowId, type SearchCounter } from '../search-rate.js';
import { countInWindow } from './cosmos-window-counter.js';

const SEARCHES = {
  id: searchWindowId,
  kind: 'quota-search-window',
  schema: searchWindowDocumentSchema,
  what: 'the search counter',
} as const;

export function createCosmosSearchCounter(container: Container): SearchCounter {
  return {
    countSearch: (userId, window, max) => countInWindow(container, SEARCHES, userId, window, max),
  };
}
