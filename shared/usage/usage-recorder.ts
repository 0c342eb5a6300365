// Records a job's model calls once: tallied by kind and model, priced from the table, folded into the record of
// what they served (a turn's, or the background job's own) under an id derived from it, counted, then reported as
// the `chat.llm.cost` metric and one `llm-usage` log line per kind and model.
import { createHash } from 'node:crypto';
import { metrics, type Counter } from '@opentelemetry/api';
import type { CarriedUsage } from '../conversation/message-completed.js';
import type { LlmUsage } from '../llm/llm-gateway.js';
import {
  USAGE_KINDS,
  USAGE_RECORD_TTL_SECONDS,
  type UsageKind,
  type UsagePart,
  type UsageRecord,
} from './contracts.js';
import { callTokens, costOf, roundUsd, type PriceTable } from './prices.js';
import type { UsageLedger } from './usage-ledger.js';
import type { TalliedCall, UsageAttribution, UsageScope, UsageWriter } from './usage-scope.js';

export class UsageRecorder implements UsageWriter {
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

  /** A call the scope's job made: recorded with the job's others once its work is over. */
  tally(scope: UsageScope, kind: UsageKind, model: string, usage: LlmUsage): void {
    scope.tally(this, { kind, model, usage });
  }

  /**
   * Records the job's calls, and those another job handed it, in one write; a job recorded before (it ran again) is
   * not counted again.
   */
  async write(scope: UsageScope): Promise<void> {
    const { attribution } = scope;
    const at = this.now().toISOString();
    const jobs = jobsOf(this.prices, attribution.job, scope.calls, attribution.carried);
    // The id is the turn's or the job's whatever the answer: a job run again after the delete still finds its record.
    // A job that ends after its conversation's delete is recorded without it: the ledger finds the conversation
    // detached.
    const record: UsageRecord = {
      id: usageRecordId(attribution),
      userId: attribution.userId,
      type: 'usage',
      ...(attribution.sessionId !== undefined ? { sessionId: attribution.sessionId } : {}),
      ...(attribution.turnId !== undefined ? { turnId: attribution.turnId } : {}),
      ...(attribution.library !== undefined ? { library: attribution.library } : {}),
      day: at.slice(0, 10),
      at,
      jobs,
      ttl: USAGE_RECORD_TTL_SECONDS,
    };
    const counted = await this.#recordOnce(record, attribution.late === true ? 'fold' : 'create');
    for (const job of Object.keys(jobs).filter((name) => !counted.includes(name))) {
      // A job run again is counted once; said aloud, so a job id that repeats by mistake cannot hide calls unseen.
      const log = attribution.log ?? console;
      const calls = (jobs[job] ?? []).reduce((sum, part) => sum + part.calls, 0);
      log.log(
        `llm-usage-repeat ${JSON.stringify({ userId: record.userId, job, record: record.id, calls })}` +
          ': this job was recorded before, so its calls are not counted again.',
      );
    }
    for (const part of counted.flatMap((job) => jobs[job] ?? [])) {
      this.#cost.add(part.costUsd, { 'gen_ai.request.model': part.model, 'chat.usage.kind': part.kind });
      const { kind, model, calls, priced: _priced, ...figures } = part;
      attribution.log?.log(
        `llm-usage ${JSON.stringify({
          userId: record.userId,
          sessionId: record.sessionId ?? null,
          turnId: record.turnId ?? null,
          ...(record.library !== undefined ? { library: record.library } : {}),
          kind,
          model,
          calls,
          ...figures,
        })}`,
      );
    }
  }

  /**
   * Every job of the record in one write; when that finds one of them recorded before (a turn's step that handed its
   * calls on, then ran again and recorded them itself), each on its own. The jobs counted now.
   */
  async #recordOnce(record: UsageRecord, first: 'create' | 'fold'): Promise<string[]> {
    const names = Object.keys(record.jobs);
    if (await this.ledger.record(record, first)) return names;
    if (names.length === 1) return [];
    const counted: string[] = [];
    for (const name of names)
      if (await this.ledger.record({ ...record, jobs: { [name]: record.jobs[name] ?? [] } }, 'fold'))
        counted.push(name);
    return counted;
  }
}

/** The record's jobs: the job's own calls and those handed to it, each under its job's name (empty ones left out). */
export function jobsOf(
  prices: PriceTable,
  job: string,
  calls: readonly TalliedCall[],
  carried: CarriedUsage | undefined,
): Record<string, UsagePart[]> {
  const jobs: Record<string, UsagePart[]> = {};
  if (carried !== undefined) jobs[carried.job] = partsOfCalls(prices, carried.calls.map(talliedCall));
  if (calls.length > 0) jobs[job] = partsOfCalls(prices, calls);
  return jobs;
}

/** A carried call as the gateway tallied it; a kind this build does not know is counted as the chat's own. */
function talliedCall(call: CarriedUsage['calls'][number]): TalliedCall {
  const kind = USAGE_KINDS.find((known) => known === call.kind) ?? 'turn';
  return { kind, model: call.model, usage: call.usage };
}

/** A job's calls by kind and model (in the order each pair first came), priced. Pure. */
export function partsOfCalls(prices: PriceTable, calls: readonly TalliedCall[]): UsagePart[] {
  const parts = new Map<string, UsagePart>();
  for (const { kind, model, usage } of calls) {
    const tokens = callTokens(usage);
    const cost = costOf(prices, model, usage);
    const key = `${kind}\n${model}`;
    const part = parts.get(key);
    parts.set(
      key,
      part === undefined
        ? { kind, model, calls: 1, ...tokens, costUsd: cost.usd, priced: cost.priced }
        : {
            ...part,
            calls: part.calls + 1,
            inputTokens: part.inputTokens + tokens.inputTokens,
            cachedInputTokens: part.cachedInputTokens + tokens.cachedInputTokens,
            outputTokens: part.outputTokens + tokens.outputTokens,
            reasoningTokens: part.reasoningTokens + tokens.reasoningTokens,
            costUsd: roundUsd(part.costUsd + cost.usd),
            priced: part.priced && cost.priced,
          },
    );
  }
  return [...parts.values()];
}

/**
 * Derived from what the calls served: the turn, for its own steps' jobs (each folded in under its name), or the job
 * itself, for a background job or work of no turn. The same job run again finds the same record.
 */
export function usageRecordId(attribution: UsageAttribution): string {
  const { userId, sessionId, turnId, job, ownRecord } = attribution;
  const served = turnId !== undefined && ownRecord !== true ? 'turn' : `job:${job}`;
  const digest = createHash('sha256')
    .update([userId, sessionId ?? '', turnId ?? '', served].join('\n'))
    .digest('hex');
  return `usage-${digest.slice(0, 40)}`;
}
