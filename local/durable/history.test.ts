// The guard that keeps a result delivered twice (around a restart) out of the replayed history.
import { describe, expect, it } from 'vitest';
import { withoutRepeatedResults, type HistoryEvent } from './history.js';

describe('withoutRepeatedResults', () => {
  it('drops results for work that already has one, in the history or earlier in the inbox', () => {
    const history: HistoryEvent[] = [
      { type: 'executionStarted' },
      { type: 'taskScheduled', seq: 0, kind: 'activity', name: 'a' },
      { type: 'taskScheduled', seq: 1, kind: 'timer', name: 'timer' },
      { type: 'taskScheduled', seq: 2, kind: 'activity', name: 'b' },
      { type: 'taskCompleted', seq: 0, result: 'first' },
    ];
    const inbox: HistoryEvent[] = [
      { type: 'taskCompleted', seq: 0, result: 'again' },
      { type: 'timerFired', seq: 1 },
      { type: 'eventRaised', name: 'go', data: 1 },
      { type: 'timerFired', seq: 1 },
      { type: 'taskFailed', seq: 2, failure: { name: 'Error', message: 'b failed' } },
      { type: 'taskCompleted', seq: 2, result: 'late' },
      { type: 'eventRaised', name: 'go', data: 1 },
    ];

    expect(withoutRepeatedResults(history, inbox)).toEqual([
      { type: 'timerFired', seq: 1 },
      { type: 'eventRaised', name: 'go', data: 1 },
      { type: 'taskFailed', seq: 2, failure: { name: 'Error', message: 'b failed' } },
      // Raised events are never duplicates of one another: each raise is a message of its own.
      { type: 'eventRaised', name: 'go', data: 1 },
    ]);
  });
});
