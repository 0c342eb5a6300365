// What quotas read of a user's spend: one point read of their day's or month's counter, whatever the history.
import type { UsageCounter } from './contracts.js';
import type { UsageLedger } from './usage-ledger.js';

/** Reads the counters for the quota checks (the UsageReader port of shared/quota). */
export class CounterUsageReader {
  constructor(private readonly ledger: Pick<UsageLedger, 'counter'>) {}

  /** Tokens (input + output, all kinds) the user used in the UTC day holding `at`. */
  async tokensOnDay(userId: string, at: Date): Promise<number> {
    const counter = await this.ledger.counter(userId, 'day', at.toISOString().slice(0, 10));
    return counter ? tokensOf(counter) : 0;
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
