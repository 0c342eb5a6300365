// Records one model call once: its tokens priced from the table, stored under an id derived from the job that made
// it, counted, then reported as the `chat.llm.cost` metric and one `llm-usage` log line.
import { createHash } from 'node:crypto';
import { metrics, type Counter } from '@opentelemetry/api';
import type { LlmUsage } from '../llm/llm-gateway.js';
import { USAGE_RECORD_TTL_SECONDS, type UsageKind, type UsageRecord } from './contracts.js';
import { callTokens, costOf, type PriceTable } from './prices.js';
import type { UsageLedger } from './usage-ledger.js';
import type { UsageScope } from './usage-scope.js';

export class UsageRecorder {
  readonly #cost: Counter;

  constructor(
    private readonly ledger: UsageLedger,
    private readonly prices: PriceTable,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.#cost = metrics.getMeter('memory-chat').createCounter('chat.llm.cost', {
      unit: 'USD',
      description: 'What model calls cost, at the LLM_PRICES table.',
    });
  }

  /** Records a call the scope's job made; a call the job made before (it ran again) is not counted again. */
  async record(scope: UsageScope, kind: UsageKind, model: string, usage: LlmUsage): Promise<void> {
    const { attribution } = scope;
    const place = scope.nextCall(kind);
    const at = this.now().toISOString();
    const tokens = callTokens(usage);
    const cost = costOf(this.prices, model, usage);
    // The id is the job's whatever the answer: a call run again after the delete still finds its record. A call that
    // ends after its conversation's delete is recorded without it: the ledger finds the conversation detached.
    const id = usageRecordId(
      attribution.userId,
      attribution.sessionId,
      attribution.turnId,
      attribution.job,
      kind,
      place,
    );
    const record: UsageRecord = {
      id,
      userId: attribution.userId,
      type: 'call',
      ...(attribution.sessionId !== undefined ? { sessionId: attribution.sessionId } : {}),
      ...(attribution.turnId !== undefined ? { turnId: attribution.turnId } : {}),
      kind,
      model,
      day: at.slice(0, 10),
      at,
      ...tokens,
      costUsd: cost.usd,
      priced: cost.priced,
      ttl: USAGE_RECORD_TTL_SECONDS,
    };
    if (!(await this.ledger.record(record))) return;
    this.#cost.add(cost.usd, { 'gen_ai.request.model': model, 'chat.usage.kind': kind });
    attribution.log?.log(
      `llm-usage ${JSON.stringify({
        userId: record.userId,
        sessionId: record.sessionId ?? null,
        turnId: record.turnId ?? null,
        kind,
        model,
        ...tokens,
        costUsd: cost.usd,
      })}`,
    );
  }
}

/** Derived from what the call served and its place in its job: the same call run again gets the same id. */
export function usageRecordId(
  userId: string,
  sessionId: string | undefined,
  turnId: string | undefined,
  job: string,
  kind: UsageKind,
  place: number,
): string {
  const digest = createHash('sha256')
    .update([userId, sessionId ?? '', turnId ?? '', job, kind, String(place)].join('\n'))
    .digest('hex');
  return `call-${digest.slice(0, 40)}`;
}
