// The usage ledger in memory, for in-process tests: a record is kept by its id, its jobs folded into it once, and only
// that first write adds the job to the counters, as the Cosmos DB adapter does; a detached conversation's later calls
// are recorded without it.
import {
  NO_USAGE,
  type CounterType,
  type UsageCounter,
  type UsageRecord,
} from '../../shared/usage/contracts.js';
import { addFigures, partsOf, sidesOf, sumFigures } from '../../shared/usage/usage-figures.js';
import type { UsageLedger } from '../../shared/usage/usage-ledger.js';

export class MemoryUsageLedger implements UsageLedger {
  readonly calls = new Map<string, UsageRecord>();
  readonly #counters = new Map<string, UsageCounter>();
  readonly #detached = new Set<string>();

  record(job: UsageRecord): Promise<boolean> {
    const stored = this.calls.get(job.id);
    // All the record's jobs or none, as one batch writes them.
    if (stored !== undefined && Object.keys(job.jobs).some((name) => name in stored.jobs))
      return Promise.resolve(false);
    const record = this.#detached.has(`${job.userId}/${job.sessionId}`) ? withoutConversation(job) : job;
    this.calls.set(
      record.id,
      stored === undefined ? record : { ...stored, jobs: { ...stored.jobs, ...record.jobs } },
    );
    const keys: [CounterType, string][] = [['month', record.at.slice(0, 7)]];
    if (record.sessionId !== undefined) keys.push(['conversation', record.sessionId]);
    const sides = sidesOf(partsOf(record));
    const tokens =
      sides.turns.inputTokens +
      sides.turns.outputTokens +
      sides.background.inputTokens +
      sides.background.outputTokens;
    const day = record.at.slice(8, 10);
    for (const [type, key] of keys) {
      const id = `${record.userId}/${type}-${key}`;
      const counter = this.#counters.get(id) ?? {
        id: `${type}-${key}`,
        userId: record.userId,
        type,
        key,
        turns: NO_USAGE,
        background: NO_USAGE,
        ...(type === 'month' ? { days: {} } : {}),
        updatedAt: record.at,
      };
      this.#counters.set(id, {
        ...counter,
        turns: addFigures(counter.turns, sides.turns),
        background: addFigures(counter.background, sides.background),
        ...(counter.days ? { days: { ...counter.days, [day]: (counter.days[day] ?? 0) + tokens } } : {}),
        updatedAt: record.at,
      });
    }
    return Promise.resolve(true);
  }

  counter(userId: string, type: CounterType, key: string): Promise<UsageCounter | undefined> {
    return Promise.resolve(this.#counters.get(`${userId}/${type}-${key}`));
  }

  conversations(userId: string, sessionIds: readonly string[]): Promise<UsageCounter[]> {
    return Promise.resolve(
      sessionIds.flatMap((sessionId) => this.#counters.get(`${userId}/conversation-${sessionId}`) ?? []),
    );
  }

  records(userId: string, fromDay: string, toDay: string): Promise<UsageRecord[]> {
    return Promise.resolve(
      [...this.calls.values()].filter(
        (record) => record.userId === userId && record.day >= fromDay && record.day <= toDay,
      ),
    );
  }

  detachConversation(userId: string, sessionId: string): Promise<number> {
    let detached = 0;
    for (const [id, record] of this.calls)
      if (record.userId === userId && record.sessionId === sessionId) {
        this.calls.set(id, withoutConversation(record));
        detached += 1;
      }
    this.#counters.delete(`${userId}/conversation-${sessionId}`);
    this.#detached.add(`${userId}/${sessionId}`);
    return Promise.resolve(detached);
  }

  lifetime(userId: string): Promise<{ turns: typeof NO_USAGE; background: typeof NO_USAGE }> {
    const months = [...this.#counters.values()].filter(
      (counter) => counter.userId === userId && counter.type === 'month',
    );
    return Promise.resolve({
      turns: sumFigures(months.map((month) => month.turns)),
      background: sumFigures(months.map((month) => month.background)),
    });
  }
}

function withoutConversation(record: UsageRecord): UsageRecord {
  const { sessionId: _session, turnId: _turn, ...rest } = record;
  return rest;
}
