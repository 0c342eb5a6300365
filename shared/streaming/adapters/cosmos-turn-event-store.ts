// The Cosmos DB adapter of TurnEventStore: one document per event in the `turn-events` container (partition
// key /sessionId, 24 h TTL). The id is derived from the turn and seq, so storing an event again is an upsert
// of the same document: a retried write never duplicates.
import type { Container } from '@azure/cosmos';
import { z } from 'zod';
import { cosmosFailure } from '../../cosmos/adapters/cosmos-items.js';
import { DependencyError } from '../../errors.js';
import { turnEventDocumentSchema, type ChatEvent, type TurnEventDocument } from '../contracts.js';
import type { TurnEventStore } from '../turn-event-store.js';

// The partition key option already scopes the query to the session; the filter on it says so in the query
// too, which the local Cosmos server needs (it does not scope queries by the partition key option).
const READ_QUERY =
  'SELECT c.event FROM c WHERE c.sessionId = @s AND c.chatMessageId = @m AND c.seq > @after ORDER BY c.seq';

const storedEvents = z.array(turnEventDocumentSchema.pick({ event: true }));

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
      let resources: unknown[];
      try {
        ({ resources } = await container.items
          .query(
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
          .fetchAll());
      } catch (error) {
        throw cosmosFailure(`reading the events of turn '${chatMessageId}'`, error);
      }
      // Every stored event is checked against the vocabulary before a client can see it.
      const parsed = storedEvents.safeParse(resources);
      if (!parsed.success)
        throw new DependencyError(
          'cosmos',
          `Cosmos DB holds events of turn '${chatMessageId}' this version does not read.`,
          {
            cause: parsed.error,
          },
        );
      return parsed.data.map((document) => document.event);
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
