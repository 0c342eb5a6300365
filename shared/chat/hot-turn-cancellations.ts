// Stop records over the hot store: `cancel.{chatMessageId}` in the turn's session (so deleting the conversation
// takes it too), expiring with the store. It is created, never replaced: a second request leaves the first as it was.
import type { HotStore } from '../conversation/hot-store.js';
import {
  turnCancellationDocumentId,
  turnCancellationDocumentSchema,
  type TurnCancellationDocument,
} from './contracts/documents.js';
import { fromHotEntry, toHotValue } from './hot-documents.js';
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
