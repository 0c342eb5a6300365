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

/** A job's attribution, how many calls of each kind it has made so far, and its records still being written. */
export class UsageScope {
  readonly #calls = new Map<UsageKind, number>();
  readonly #writes: Promise<void>[] = [];
  #failure: { error: unknown } | undefined;

  constructor(readonly attribution: UsageAttribution) {}

  /** The place of the next call of `kind` in the job (0, 1, ...). */
  nextCall(kind: UsageKind): number {
    const place = this.#calls.get(kind) ?? 0;
    this.#calls.set(kind, place + 1);
    return place;
  }

  /** A record's write, which the job waits for before it ends, not the call's caller. */
  defer(write: Promise<void>): void {
    this.#writes.push(
      write.catch((error: unknown) => {
        this.#failure ??= { error };
      }),
    );
  }

  /** Waits for every write; throws the first that failed, so the job is run again (and counts once). */
  async settle(): Promise<void> {
    while (this.#writes.length > 0) await Promise.all(this.#writes.splice(0));
    if (this.#failure) throw this.#failure.error;
  }
}

const scopes = new AsyncLocalStorage<UsageScope>();

/**
 * Runs `work` with its model calls counted to `attribution`. The records are written beside the work (a turn's
 * message-end does not wait for them) and the job ends once they are stored.
 */
export async function withUsage<T>(attribution: UsageAttribution, work: () => Promise<T>): Promise<T> {
  const scope = new UsageScope(attribution);
  let result: T;
  try {
    result = await scopes.run(scope, work);
  } catch (error) {
    await scope.settle().catch(() => undefined);
    throw error;
  }
  await scope.settle();
  return result;
}

/** The scope the current work runs in; undefined outside any job (nothing is recorded then). */
export function currentUsageScope(): UsageScope | undefined {
  return scopes.getStore();
}
