// The memory worker's use-case: a finished turn consolidated into memory, then, when that changed something, the
// user's open pages told so (a notice lost costs only a stale panel: it never fails the turn's consolidation).
import { ensureError } from '../errors.js';
import type { Logger } from '../logger.js';
import {
  consolidateTurn,
  type ConsolidationOutcome,
  type Delivery,
  type MemoryWorkerServices,
} from './consolidate-turn.js';
import type { MessageCompleted } from '../conversation/message-completed.js';
import type { MemoryNotices } from './memory-notices.js';

export type RememberServices = MemoryWorkerServices & { notices?: MemoryNotices };

export async function rememberTurn(
  services: RememberServices,
  event: MessageCompleted,
  log: Pick<Logger, 'log' | 'warn'>,
  delivery?: Delivery,
): Promise<ConsolidationOutcome> {
  const outcome = await consolidateTurn(services, event, log, delivery);
  if (outcome.status !== 'consolidated' || services.notices === undefined) return outcome;
  const summary = outcome.summary === 'written';
  const profile = outcome.profile === 'applied';
  // A redelivery finds its work done and tells nobody again.
  if (!summary && !profile) return outcome;
  try {
    await services.notices.memoryChanged(event.userId, {
      type: 'memory-changed',
      sessionId: event.sessionId,
      chatMessageId: event.chatMessageId,
      summary,
      profile,
    });
  } catch (error) {
    log.warn(
      `Memory: the pages of ${event.userId} were not told that turn ${event.chatMessageId} changed memory: ` +
        ensureError(error).message,
    );
  }
  return outcome;
}
