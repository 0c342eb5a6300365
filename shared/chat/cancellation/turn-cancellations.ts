// The port of turn cancellations: the durable record that a turn's owner asked to stop it, so that whichever
// instance runs the turn's steps finds it, however the request reached the app. One small item per stopped turn,
// beside the turn's record in the hot store (chat/hot-turn-cancellations.ts).
import type { TurnRef } from '../../conversation/messages.js';

export interface TurnCancellations {
  /** Records the request; recording it again changes nothing (the first request's time stays). */
  request(ref: TurnRef, requestedAt: string): Promise<void>;
  /** Whether a stop was recorded for the turn: one point read. */
  isRequested(ref: TurnRef): Promise<boolean>;
}
