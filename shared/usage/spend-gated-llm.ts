// The model as a background job (a conversation's title and summary, profile consolidation, their embeddings) sees
// it: each call first checks the job's user against the spend limits, with what turns under way reserve, and is
// not made once they are reached; the job then falls back or defers as its part says.
import { QuotaExceededError } from '../errors.js';
import { LlmError, type LlmGateway } from '../llm/llm-gateway.js';
import { isExempt, refuseWhenSpent, type QuotaServices } from '../quota/quota-gate.js';
import { currentUsageScope } from './usage-scope.js';

/** A model call a background job did not make: its user's tokens today or spend this month are used up. */
export class SpendRefusedError extends LlmError {
  constructor(readonly refusal: QuotaExceededError) {
    // Not retryable by the job's own retries: the window reopens at midnight UTC (or the 1st), not in seconds.
    super(`The model was not called: ${refusal.message}`, {
      providerCode: 'quota_exceeded',
      retryable: false,
    });
  }
}

/**
 * Wraps the gateway the history and memory workers call: inside a usage scope (the worker's job for a user), every
 * chat, JSON and embedding call is refused with SpendRefusedError while the user's spend is used up. The quota's
 * limits and readers are read at each call, as the front door reads them. Outside a scope nothing is checked, nor
 * for a user QUOTA_EXEMPT names (by id, or by a group the turn's identity named).
 */
export function spendGatedLlm(llm: LlmGateway, quota: QuotaServices): LlmGateway {
  const gate = async (): Promise<void> => {
    const scope = currentUsageScope();
    // A job knows its user's id and the groups their identity named at the turn, as the front door did.
    const { userId, groups } = scope?.attribution ?? { userId: '' };
    if (scope === undefined || isExempt(quota.config, { userId, ...(groups ? { groups: [...groups] } : {}) }))
      return;
    try {
      await refuseWhenSpent(quota, scope.attribution.userId, quota.now?.() ?? new Date(), 'background');
    } catch (error) {
      if (error instanceof QuotaExceededError) throw new SpendRefusedError(error);
      throw error;
    }
  };
  return {
    async streamChat(request, onDelta) {
      await gate();
      return llm.streamChat(request, onDelta);
    },
    async completeJson(request) {
      await gate();
      return llm.completeJson(request);
    },
    async embed(texts, options) {
      await gate();
      return llm.embed(texts, options);
    },
    probe: () => llm.probe(),
  };
}
