// The Cosmos DB adapter of TurnEventStore: one document per event in the `turn-events` container (partition
// key /sessionId, 24 h TTL). The id is derived from the turn and seq, so storing an event again is an upsert
// of the same document: a retried write never duplicates.
import type { Container } from '@azure/cosmos';
import { cosmosFailure } from '../../cosmos/adapters/cosmos-items.js';
import type { ChatEvent, TurnEventDocument } from '../contracts.js';
import type { TurnEventStore } from '../turn-event-store.js';

// The partition key option already scopes the query to the session; the filter on it says so in the query
// too, which the local Cosmos server needs (it does not scope queries by the partition key option).
const READ_QUERY =
  'SELECT c.event FROM c WHERE c.sessionId = @s AND c.chatMessageId = @m AND c.seq > @after ORDER BY c.seq';

export function createCosmosTurnEventStore(container: Container): TurnEventStore {
  return {
    async append(events) {
      try {
        await Promise.all(events.map((event) => container.items.upsert(toDocument(event))));
      } catch (error) {
        throw cosmosFailure(`storing ${events.length} turn event(s)`, error);
      }
    },
    async read(sessionId, chatMessageId, afterSeq) {
      try {
        const { resources } = await container.items
          .query<Pick<TurnEventDocument, 'event'>>(
            {
              query: READ_QUERY,
              parameters: [
                { name: '@s', value: sessionId },
                { name: '@m', value: chatMessageId },
                { name: '@after', value: afterSeq },
              ],
            },
            { partitionKey: sessionId },
          )
          .fetchAll();
        return resources.map((document) => document.event);
      } catch (error) {
        throw cosmosFailure(`reading the events of turn '${chatMessageId}'`, error);
      }
    },
  };
}

/** The document of one event; the zero-padded seq keeps ids of one turn sorted as their seq. */
function toDocument(event: ChatEvent): TurnEventDocument {
  return {
    id: `${event.chatMessageId}:${String(event.seq).padStart(8, '0')}`,
    sessionId: event.sessionId,
    chatMessageId: event.chatMessageId,
    seq: event.seq,
    event,
  };
}
