// What quotas read of a user's spend: one point read of their month's counter (it holds each day's tokens), whatever
// the history.
import type { UsageCounter } from './contracts.js';
import type { UsageLedger } from './usage-ledger.js';

/** Reads the counters for the quota checks (the UsageReader port of shared/quota). */
export class CounterUsageReader {
  constructor(private readonly ledger: Pick<UsageLedger, 'counter'>) {}

  /** Tokens (input + output, all kinds) the user used in the UTC day holding `at`. */
  async tokensOnDay(userId: string, at: Date): Promise<number> {
    const day = at.toISOString().slice(0, 10);
    const month = await this.ledger.counter(userId, 'month', day.slice(0, 7));
    const counted = month?.days?.[day.slice(8, 10)] ?? 0;
    // A month that began to count its days later, or not yet: the day's tokens before are in the day's own counter.
    if (month === undefined || (month.days !== undefined && (month.daysSince ?? '') < day)) return counted;
    const before = await this.ledger.counter(userId, 'day', day);
    return counted + (before ? tokensOf(before) : 0);
  }

  /** US dollars the user spent in the UTC month holding `at`. */
  async costInMonth(userId: string, at: Date): Promise<number> {
    const counter = await this.ledger.counter(userId, 'month', at.toISOString().slice(0, 7));
    return counter ? counter.turns.costUsd + counter.background.costUsd : 0;
  }
}

function tokensOf(counter: UsageCounter): number {
  return (
    counter.turns.inputTokens +
    counter.turns.outputTokens +
    counter.background.inputTokens +
    counter.background.outputTokens
  );
}
