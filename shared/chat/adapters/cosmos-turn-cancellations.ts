// The Cosmos DB adapter of TurnCancellations: `cancel.{chatMessageId}` in the hot container, in the session's
// partition (so a deleted conversation's purge takes it too), expiring with the container's 24 h TTL. It is created,
// never replaced: a second request meets 409 and leaves the first one as it was.
import type { Container } from '@azure/cosmos';
import { cosmosFailure, cosmosStatus, readItem } from '../../cosmos/adapters/cosmos-items.js';
import {
  turnCancellationDocumentId,
  turnCancellationDocumentSchema,
  type TurnCancellationDocument,
} from '../contracts/documents.js';
import type { TurnCancellations } from '../cancellation/turn-cancellations.js';

export function createCosmosTurnCancellations(container: Container): TurnCancellations {
  return {
    async request(ref, requestedAt) {
      const document: TurnCancellationDocument = {
        id: turnCancellationDocumentId(ref.chatMessageId),
        kind: 'turn-cancellation',
        userId: ref.userId,
        sessionId: ref.sessionId,
        chatMessageId: ref.chatMessageId,
        requestedAt,
      };
      try {
        await container.items.create(document);
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw cosmosFailure('recording the cancellation of the turn', error);
      }
    },

    async isRequested(ref) {
      const stored = await readItem(
        container,
        turnCancellationDocumentId(ref.chatMessageId),
        ref.sessionId,
        "the turn's cancellation",
        turnCancellationDocumentSchema,
      );
      // Ids are per session (the partition); the owner is checked too, so another user's record never counts.
      return stored !== undefined && stored.resource.userId === ref.userId;
    },
  };
}
