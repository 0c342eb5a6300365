// Who a model call is for: the job that makes it (a turn's round or tool call, a worker's run for a turn, an
// ingestion) sets its attribution around its work; every call the gateway makes inside it is tallied, and recorded
// once, all together, as the job ends.
import { AsyncLocalStorage } from 'node:async_hooks';
import { CARRIED_CALLS_MAX, type CarriedUsage } from '../conversation/message-completed.js';
import type { LlmUsage } from '../llm/llm-gateway.js';
import type { Logger } from '../logger.js';
import type { UsageKind } from './contracts.js';

export interface UsageAttribution {
  userId: string;
  /** The groups the user's identity named (a background job's, from its turn): who QUOTA_EXEMPT exempts. */
  groups?: readonly string[];
  sessionId?: string;
  /** The turn (its chatMessageId) the work serves. */
  turnId?: string;
  /**
   * Names the job among the others of the same turn (`round:2`, `history`, `memory`, ...): a record holds each job's
   * calls under its name, so a job run again counts once.
   */
  job: string;
  /**
   * The job's calls get a record of their own (a search, a memory import). Without it, the jobs of a turn (its rounds,
   * tool calls and failure step, and the history and memory workers' runs for it) are folded into the turn's one record.
   */
  ownRecord?: boolean;
  /**
   * Calls another job made and left to this one (a turn's, carried by its announcement to the history worker):
   * written in the same record and batch as this job's own, each under its job's name.
   */
  carried?: CarriedUsage;
  /**
   * The job usually ends after another job of the turn stored the turn's record (the memory worker's, after the
   * history worker's): its write tries folding into it first.
   */
  late?: boolean;
  /** Every call of the job is of this kind (knowledge ingestion), instead of what each call says it is. */
  kind?: UsageKind;
  /** The knowledge library the job worked for (an ingestion into the shared library is counted to its uploader). */
  library?: string;
  /** The invocation's logger: the `llm-usage` lines of the job's record, or the line saying it was counted before. */
  log?: Pick<Logger, 'log'>;
}

/** The attribution's groups of an event that may name them (spread into a UsageAttribution). */
export function groupsOf(event: { groups?: readonly string[] | undefined }): { groups?: readonly string[] } {
  return event.groups === undefined ? {} : { groups: event.groups };
}

/** One model call of a job, as the gateway saw it. */
export interface TalliedCall {
  kind: UsageKind;
  model: string;
  usage: LlmUsage;
}

/** Writes a job's calls as one record once the job's work is over (the UsageRecorder). */
export interface UsageWriter {
  write(scope: UsageScope): Promise<void>;
}

/** A job's attribution and the calls it has made so far. */
export class UsageScope {
  #calls: TalliedCall[] = [];
  #writer: UsageWriter | undefined;

  constructor(readonly attribution: UsageAttribution) {}

  /** A call of the job, recorded by `writer` with the others as the job ends. */
  tally(writer: UsageWriter, call: TalliedCall): void {
    this.#writer = writer;
    this.#calls.push(call);
  }

  /** The calls so far, in the order they were made. */
  get calls(): readonly TalliedCall[] {
    return this.#calls;
  }

  /**
   * Hands the calls made so far to the job that `deliver` tells (with this job's name, so they count once whoever
   * records them): once it resolves they are no longer this job's to write. A failure keeps them here.
   */
  async handOver(deliver: (carried: CarriedUsage | undefined) => Promise<void>): Promise<void> {
    const calls = this.#calls;
    // More than an announcement carries (never seen: a step makes a few): they stay this job's to write.
    if (calls.length === 0 || calls.length > CARRIED_CALLS_MAX) return deliver(undefined);
    await deliver({ job: this.attribution.job, calls: calls.map((call) => ({ ...call })) });
    this.#calls = this.#calls.slice(calls.length);
  }

  /** Writes the job's record, if it made or was handed any call; a failure throws, so the job runs again. */
  async settle(writer?: UsageWriter): Promise<void> {
    const to = this.#writer ?? writer;
    if (to !== undefined && (this.#calls.length > 0 || this.attribution.carried !== undefined))
      await to.write(this);
  }
}

const scopes = new AsyncLocalStorage<UsageScope>();

/**
 * Runs `work` with its model calls counted to `attribution`. A turn's message-end does not wait for the record: it
 * is written after the work, and the job ends once it is stored. The calls of a job that failed were paid for too:
 * they are recorded before the failure goes on. `writer` writes calls handed to the job when it makes none itself.
 */
export async function withUsage<T>(
  attribution: UsageAttribution,
  work: () => Promise<T>,
  writer?: UsageWriter,
): Promise<T> {
  const scope = new UsageScope(attribution);
  let result: T;
  try {
    result = await scopes.run(scope, work);
  } catch (error) {
    await scope.settle(writer).catch(() => undefined);
    throw error;
  }
  await scope.settle(writer);
  return result;
}

/** The scope the current work runs in; undefined outside any job (nothing is recorded then). */
export function currentUsageScope(): UsageScope | undefined {
  return scopes.getStore();
}
