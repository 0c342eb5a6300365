// Who a model call is for: the job that makes it (a turn's round or tool call, a worker's run for a turn, an
// ingestion) sets its attribution around its work, and every call the gateway makes inside it is counted to it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '../logger.js';
import type { UsageKind } from './contracts.js';

export interface UsageAttribution {
  userId: string;
  sessionId?: string;
  /** The turn (its chatMessageId) the work serves. */
  turnId?: string;
  /**
   * Names the job among the others of the same turn (`llmStep:2`, `history`, `memory`, ...): with the kind and the
   * call's place among the job's calls of that kind, it makes the record's id, so a job run again counts once.
   */
  job: string;
  /** Every call of the job is of this kind (knowledge ingestion), instead of what each call says it is. */
  kind?: UsageKind;
  /** The invocation's logger, which writes each recorded call's `llm-usage` line. */
  log?: Pick<Logger, 'log'>;
}

/** A job's attribution and how many calls of each kind it has made so far. */
export class UsageScope {
  readonly #calls = new Map<UsageKind, number>();

  constructor(readonly attribution: UsageAttribution) {}

  /** The place of the next call of `kind` in the job (0, 1, ...). */
  nextCall(kind: UsageKind): number {
    const place = this.#calls.get(kind) ?? 0;
    this.#calls.set(kind, place + 1);
    return place;
  }
}

const scopes = new AsyncLocalStorage<UsageScope>();

/** Runs `work` with its model calls counted to `attribution`. */
export function withUsage<T>(attribution: UsageAttribution, work: () => Promise<T>): Promise<T> {
  return scopes.run(new UsageScope(attribution), work);
}

/** The scope the current work runs in; undefined outside any job (nothing is recorded then). */
export function currentUsageScope(): UsageScope | undefined {
  return scopes.getStore();
}
