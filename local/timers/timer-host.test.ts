import { describe, expect, it } from 'vitest';
import type { TimerFunctionDefinition } from '../../functions/definition.js';
import { startLocalTimers } from './timer-host.js';

const timer = (
  name: string,
  localIntervalMs: number,
  handler: TimerFunctionDefinition['handler'],
): TimerFunctionDefinition => ({ kind: 'timer', name, schedule: '0 0 * * * *', localIntervalMs, handler });

describe('local timers', () => {
  it('runs each timer on its interval, and on demand', async () => {
    let runs = 0;
    const timers = startLocalTimers([timer('tick', 20, () => Promise.resolve(void runs++))], () => undefined);
    await timers.run('tick');
    expect(runs).toBe(1);
    await expect.poll(() => runs, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    await timers.stop();
    const stopped = runs;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(runs).toBe(stopped);
    await expect(timers.run('unknown')).rejects.toThrow(/No timer function 'unknown'/);
  });

  it('runs one at a time, and logs a failure without stopping the timer', async () => {
    let release: () => void = () => undefined;
    let started = 0;
    const logged: string[] = [];
    const timers = startLocalTimers(
      [
        timer('slow', 60_000, () => {
          started++;
          return new Promise<void>((resolve) => (release = resolve));
        }),
        timer('broken', 60_000, () => Promise.reject(new Error('no storage'))),
      ],
      (level, ...args) => logged.push(`${level}: ${args.map(String).join(' ')}`),
    );
    const first = timers.run('slow');
    const second = timers.run('slow');
    expect(started).toBe(1);
    release();
    await Promise.all([first, second]);
    await timers.run('broken');
    expect(logged.some((line) => line.startsWith('error') && line.includes('Timer broken failed'))).toBe(
      true,
    );
    await timers.run('broken');
    await timers.stop();
  });
});
