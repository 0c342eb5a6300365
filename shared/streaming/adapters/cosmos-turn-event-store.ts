// The Cosmos DB adapter of TurnEventStore: one document per stored batch in the `turn-events` container
// (partition key /sessionId, 24 h TTL), so a turn costs one write per flush, not one per event.
import type { Container } from '@azure/cosmos';
import { isDeepStrictEqual } from 'node:util';
import { cosmosFailure, cosmosStatus, queryItems, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { turnEventBatchDocumentSchema, type ChatEvent, type TurnEventBatchDocument } from '../contracts.js';
import { EventSeqTakenError, type TurnEventStore } from '../turn-event-store.js';

// The partition key option already scopes the query to the session; the filter on it says so in the query
// too, for servers that do not scope queries by the partition key option.
export const READ_QUERY =
  'SELECT c.events FROM c WHERE c.sessionId = @s AND c.chatMessageId = @m AND c.lastSeq > @after ORDER BY c.firstSeq';

export function createCosmosTurnEventStore(container: Container): TurnEventStore {
  return {
    async append(batch) {
      const document = toDocument(batch);
      try {
        await container.items.create(document);
        return 'stored';
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw cosmosFailure(`storing ${batch.length} turn event(s)`, error);
      }
      // Already there: the same batch from a retried write, or another attempt's.
      const stored = await readItem(
        container,
        document.id,
        document.sessionId,
        'a batch of turn events',
        turnEventBatchDocumentSchema,
      );
      if (stored === undefined || !isDeepStrictEqual(stored.resource.events, document.events))
        throw new EventSeqTakenError(document.chatMessageId, document.firstSeq);
      return 'already-stored';
    },

    async read(sessionId, chatMessageId, afterSeq) {
      // Every stored event is checked against the vocabulary before a client can see it.
      const batches = await queryItems(
        container,
        {
          query: READ_QUERY,
          parameters: [
            { name: '@s', value: sessionId },
            { name: '@m', value: chatMessageId },
            { name: '@after', value: afterSeq },
          ],
        },
        sessionId,
        `the events of turn '${chatMessageId}'`,
        turnEventBatchDocumentSchema.pick({ events: true }),
      );
      return batches.flatMap((document) => document.events).filter((event) => event.seq > afterSeq);
    },
  };
}

/** The document of one batch; the zero-padded first seq keeps ids of one turn sorted as their seqs. */
function toDocument(batch: readonly ChatEvent[]): TurnEventBatchDocument {
  const first = batch[0];
  const last = batch.at(-1);
  if (first === undefined || last === undefined)
    throw new Error('An empty batch of events cannot be stored.');
  for (const [index, event] of batch.entries()) {
    if (event.chatMessageId !== first.chatMessageId || event.seq !== first.seq + index)
      throw new Error(`A stored batch holds one turn's events with contiguous seqs (seq ${event.seq}).`);
  }
  return {
    id: `${first.chatMessageId}:${String(first.seq).padStart(8, '0')}`,
    sessionId: first.sessionId,
    chatMessageId: first.chatMessageId,
    firstSeq: first.seq,
    lastSeq: last.seq,
    events: [...batch],
  };
}
