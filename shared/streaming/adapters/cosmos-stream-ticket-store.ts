// The Cosmos DB adapter of StreamTicketStore: one document per ticket in the `turn-events` container, in its
// session's partition, id `ticket.{sha256}`, with its own `ttl` so Cosmos DB removes it when it expires.
import type { Container } from '@azure/cosmos';
import { cosmosFailure, readItem } from '../../cosmos/adapters/cosmos-items.js';
import {
  streamTicketDocumentId,
  streamTicketDocumentSchema,
  type StreamTicketDocument,
} from '../contracts.js';
import type { StreamTicketStore } from '../stream-tickets.js';

export function createCosmosStreamTicketStore(
  container: Container,
  now: () => Date = () => new Date(),
): StreamTicketStore {
  return {
    async save(ticketSha256, grant) {
      const secondsLeft = Math.ceil((Date.parse(grant.expiresAt) - now().getTime()) / 1000);
      const document: StreamTicketDocument = {
        id: streamTicketDocumentId(ticketSha256),
        kind: 'stream-ticket',
        sessionId: grant.sessionId,
        grant: { userId: grant.userId, chatMessageId: grant.chatMessageId },
        expiresAt: grant.expiresAt,
        ttl: Math.max(1, secondsLeft),
      };
      try {
        await container.items.create(document);
      } catch (error) {
        throw cosmosFailure('storing the stream ticket', error);
      }
    },

    async find(sessionId, ticketSha256) {
      const stored = await readItem(
        container,
        streamTicketDocumentId(ticketSha256),
        sessionId,
        'a stream ticket',
        streamTicketDocumentSchema,
      );
      if (stored === undefined) return undefined;
      const { resource } = stored;
      return {
        userId: resource.grant.userId,
        sessionId: resource.sessionId,
        chatMessageId: resource.grant.chatMessageId,
        expiresAt: resource.expiresAt,
      };
    },
  };
}
