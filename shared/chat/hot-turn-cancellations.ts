// Stop records over the hot store: `cancel.{chatMessageId}` in the turn's session (so deleting the conversation
// takes it too), expiring with the store. It is created, never replaced: a second request leaves the first as it was.
// The stop is also marked in the conversation's working memory, so a model round reads it with that document.
import type { HotStore } from '../conversation/hot-store.js';
import {
  turnCancellationDocumentId,
  turnCancellationDocumentSchema,
  type TurnCancellationDocument,
} from './contracts/documents.js';
import { fromHotEntry, toHotValue } from './hot-documents.js';
import { markWorkingMemory } from './hot-working-memory.js';
import type { TurnCancellations } from './cancellation/turn-cancellations.js';

export function createHotTurnCancellations(hot: HotStore): TurnCancellations {
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
      // A conflict: a stop was recorded already, and the first one's time stays.
      await hot.write(ref.sessionId, document.id, toHotValue(document), { kind: 'absent' });
      // Then marked in working memory too, where the turn's next model round reads it (the record first: a round
      // that finds no entry to be marked reads the record).
      await markWorkingMemory(hot, ref, { stopped: ref.chatMessageId });
    },

    async isRequested(ref) {
      const entry = await hot.read(ref.sessionId, turnCancellationDocumentId(ref.chatMessageId));
      if (entry === undefined) return false;
      const stored = fromHotEntry(
        turnCancellationDocumentSchema,
        ref.sessionId,
        entry,
        "the turn's cancellation",
      );
      // Keys are per session; the owner is checked too, so another user's record never counts.
      return stored.userId === ref.userId;
    },
  };
}
