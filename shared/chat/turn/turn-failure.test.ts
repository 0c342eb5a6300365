// The class a failed turn's error event names: where the failure came from, marked by the failing step and read
// back by the orchestration from the only part of a failed activity it receives, its message.
import { describe, expect, it } from 'vitest';
import { DependencyError, NotReadyError, QuotaExceededError } from '../../errors.js';
import { LlmError } from '../../llm/llm-gateway.js';
import { round0, TurnFixture } from '../../../test/support/turn-fixture.js';
import { llmStep } from './llm-step.js';
import { failureClassOf, markingFailures, TURN_FAILURES, turnFailureOf } from './turn-failure.js';

/** What the orchestration receives when an activity threw `error`: a new error carrying its type and message. */
function asActivityFailure(error: Error): Error {
  return new Error(`${error.name}: ${error.message}`);
}

/** A step that throws `error` (any value, as a dependency may), and what it throws once marked. */
async function thrownBy(error: unknown): Promise<Error> {
  const step = (): Promise<never> => {
    throw error;
  };
  return markingFailures(step).catch((e: unknown) => e as Error);
}

async function failureOfStep(error: unknown) {
  const thrown = await thrownBy(error);
  return turnFailureOf(asActivityFailure(thrown));
}

describe('a failed turn names the class of what failed', () => {
  it.each([
    [
      'the model',
      new LlmError('The model endpoint refused: 503.', { retryable: true }),
      'llm_unavailable',
      /model/,
    ],
    [
      'Cosmos DB',
      new DependencyError('cosmos', 'Cosmos DB failed reading.'),
      'storage_unavailable',
      /Cosmos DB/,
    ],
    [
      'the turn events',
      new DependencyError('turnEvents', 'Storing failed.'),
      'storage_unavailable',
      /Cosmos DB/,
    ],
    [
      'Redis',
      new DependencyError('redis', 'Redis read failed: ECONNREFUSED.'),
      'hot_store_unavailable',
      /hot store/,
    ],
    [
      'the hot store',
      new DependencyError('hot-store', 'The record vanished.'),
      'hot_store_unavailable',
      /hot store/,
    ],
    ['a quota', new QuotaExceededError('Too many tokens.', 'tokens', 10, 11, 60), 'quota_exceeded', /limit/],
    ['anything else', new Error('a bug'), 'turn_failed', /could not be completed/],
    ['a retry signal', new NotReadyError('not yet'), 'turn_failed', /could not be completed/],
  ])('%s', async (_from, error, code, says) => {
    expect(failureClassOf(error)).toBe(code);
    const failure = await failureOfStep(error);
    expect(failure.code).toBe(code);
    expect(failure.message).toMatch(says);
    expect(failure).toEqual(TURN_FAILURES[code as keyof typeof TURN_FAILURES]);
  });

  it('keeps a marked failure as it is when it is marked again, and keeps the original as its cause', async () => {
    const redis = new DependencyError('redis', 'Redis read failed.');
    const once = await thrownBy(redis);
    const twice = await thrownBy(once);
    expect(twice).toBe(once);
    expect(once.cause).toBe(redis);
    expect(once.message).toContain('Redis read failed.');
  });

  it('reads an unmarked failure by its type, else as the generic one', () => {
    expect(turnFailureOf(new DependencyError('redis', 'down')).code).toBe('hot_store_unavailable');
    expect(turnFailureOf(new Error('Activity timed out')).code).toBe('turn_failed');
    expect(turnFailureOf('[turn-failure:not_a_class] x').code).toBe('turn_failed');
  });

  it('marks a round whose hot store is down as a hot store failure, not a model one', async () => {
    const t = new TurnFixture();
    t.memory.load = () =>
      Promise.reject(new DependencyError('redis', 'Redis read failed: connection refused.'));
    const thrown = await llmStep(t.services(), round0).then(
      () => new Error('the round answered'),
      (e: unknown) => e as Error,
    );
    expect(turnFailureOf(asActivityFailure(thrown))).toEqual(TURN_FAILURES.hot_store_unavailable);
  });
});
