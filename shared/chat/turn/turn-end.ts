// How a turn ends: its quota slot freed before its end reaches a client, and the one line it logs (written by
// whichever attempt ended the stream, once that step is known kept).
import type { TurnRef } from '../../conversation/messages.js';
import { releaseTurn } from '../../quota/quota-gate.js';
import type { TurnEnd } from './turn-effects.js';
import { turnLogLine } from './turn-log-line.js';
import type { TurnServices } from './turn-services.js';

/**
 * The turn's one line at the default log level, written by the step that ended its stream once that step is known
 * kept (a turn whose conversation was deleted meanwhile is kept by nobody, and logs no line of an ending).
 */
export function logTurnEnd(services: Pick<TurnServices, 'log' | 'now'>, turn: TurnRef, end: TurnEnd): void {
  services.log?.log?.(
    turnLogLine({
      ...end,
      sessionId: turn.sessionId,
      chatMessageId: turn.chatMessageId,
      endedAt: services.now?.() ?? new Date(),
    }),
  );
}

/**
 * Frees the turn's QUOTA_CONCURRENT_TURNS slot before its end reaches a client, so a client that sends its next
 * message on seeing the end is not refused for this turn's slot. The chat worker frees it again once the orchestration
 * has ended (which also covers turns that end without an event); a failure here is left to it.
 */
export async function freeQuotaSlot(
  services: Pick<TurnServices, 'quota' | 'log'>,
  turn: TurnRef & { quotaSlot?: boolean | undefined },
): Promise<void> {
  if (services.quota === undefined) return;
  try {
    await releaseTurn(services.quota, turn);
  } catch (error) {
    services.log?.warn(
      `Turn ${turn.chatMessageId}: its quota slot is left to the chat worker to free:`,
      error,
    );
  }
}
