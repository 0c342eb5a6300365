// The memory worker's retry policy for its model calls: a failure is retried over a few deliveries, then the turn
// is left out of that part of memory with a warning.
import { LlmError } from '../llm/llm-gateway.js';
import type { Logger } from '../logger.js';
import { SpendRefusedError } from '../usage/spend-gated-llm.js';

/** How often Service Bus has delivered the event, this time included (1 when unknown). */
export interface Delivery {
  deliveryCount: number;
}

/**
 * Deliveries over which a model failure is retried before the turn is left out of that part of memory (with a
 * warning): an outage of a few minutes is ridden out, and a model that keeps failing on one turn never sends a valid
 * event to the dead-letter queue, nor holds up the conversation's later turns (the subscription has sessions).
 */
export const MODEL_DELIVERIES = 3;

/**
 * Runs a model call under the retry policy: its answer, or undefined when the turn is to be left out of that part
 * (the model refused for good, or failed on MODEL_DELIVERIES deliveries); otherwise the error escapes so the event
 * is delivered again.
 */
export type ModelCall = <T>(part: string, call: () => Promise<T>) => Promise<T | undefined>;

export function modelPolicy(label: string, delivery: Delivery, log: Pick<Logger, 'log' | 'warn'>): ModelCall {
  return async (part, call) => {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof LlmError)) throw error;
      if (error.retryable && delivery.deliveryCount < MODEL_DELIVERIES) throw error;
      const when = error.retryable ? `after ${delivery.deliveryCount} deliveries` : 'for good';
      const why =
        error instanceof SpendRefusedError ? "its user's spend is used up" : `the model failed ${when}`;
      log.warn(`Memory: ${label} is left out of ${part}: ${why}. ${error.message}`);
      return undefined;
    }
  };
}
