// The Cosmos DB adapter of SearchCounter: one document per user and minute in the `quotas` container, counted
// with a conditional patch (incr while below max), as the message counter is.
import type { Container } from '@azure/cosmos';
import { DependencyError } from '../../errors.js';
import { readItem } from '../../cosmos/adapters/cosmos-items.js';
import { conditionNumber, patchItem, writeOnVersion } from '../../cosmos/adapters/cosmos-patch.js';
import {
  searchWindowDocumentSchema,
  searchWindowId,
  type SearchCounter,
  type SearchWindowDocument,
} from '../search-rate.js';

/** Creates that lose a race are retried as patches of the winner's document, at most this often. */
const COUNT_ATTEMPTS = 8;

export function createCosmosSearchCounter(container: Container): SearchCounter {
  return {
    async countSearch(userId, window, max) {
      const id = searchWindowId(window.start);
      for (let attempt = 0; attempt < COUNT_ATTEMPTS; attempt += 1) {
        const patched = await patchItem(
          container,
          id,
          userId,
          [{ op: 'incr', path: '/count', value: 1 }],
          `FROM c WHERE c.count < ${conditionNumber(max)}`,
          'the search counter',
        );
        if (patched === 'patched') return { counted: true };
        if (patched === 'unmet') {
          const read = await readItem(
            container,
            id,
            userId,
            'the search counter',
            searchWindowDocumentSchema,
          );
          return { counted: false, count: read?.resource.count ?? max };
        }
        // The minute's first search creates its counter; a create that loses the race patches the winner's.
        const document: SearchWindowDocument = {
          id,
          kind: 'quota-search-window',
          userId,
          windowStart: window.start.toISOString(),
          count: 1,
          ttl: window.seconds * 2,
        };
        if (
          (await writeOnVersion(container, document, userId, undefined, 'the search counter')) !== 'conflict'
        )
          return { counted: true };
      }
      throw new DependencyError(
        'cosmos',
        'Too many searches of this user at once changed their counter; try again.',
      );
    },
  };
}
