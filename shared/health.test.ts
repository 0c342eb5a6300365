import { describe, expect, it } from 'vitest';
import { checkHealth, healthCache } from './health.js';

describe('checkHealth', () => {
  it('is ok when every dependency answers', async () => {
    const report = await checkHealth(
      [
        { name: 'a', check: () => Promise.resolve('fine') },
        { name: 'b', check: () => Promise.resolve('also fine') },
      ],
      100,
    );
    expect(report.status).toBe('ok');
    expect(report.dependencies.a).toMatchObject({ status: 'up', detail: 'fine' });
    expect(report.dependencies.b).toMatchObject({ status: 'up', detail: 'also fine' });
  });

  it('reports a failing and a hanging dependency as down without hiding the others', async () => {
    const report = await checkHealth(
      [
        { name: 'ok', check: () => Promise.resolve('fine') },
        { name: 'broken', check: () => Promise.reject(new Error('connection refused')) },
        { name: 'slow', check: () => new Promise<string>(() => undefined) },
      ],
      20,
    );
    expect(report.status).toBe('degraded');
    expect(report.failing).toEqual(['broken', 'slow']);
    expect(report.dependencies.ok?.status).toBe('up');
    expect(report.dependencies.broken).toMatchObject({ status: 'down', detail: 'connection refused' });
    expect(report.dependencies.slow).toMatchObject({ status: 'down', detail: 'no answer within 20 ms' });
  });

  it('names nothing as failing when all is up', async () => {
    const report = await checkHealth([{ name: 'a', check: () => Promise.resolve('fine') }], 100);
    expect(report.failing).toEqual([]);
  });
});

describe('healthCache', () => {
  it('runs a check at most once per ttl, keeping a failure as well as a success', async () => {
    let clock = 0;
    const cached = healthCache(30_000, () => clock);
    let runs = 0;
    const flaky = () => {
      runs += 1;
      return runs === 1 ? Promise.reject(new Error('container gone')) : Promise.resolve(`run ${runs}`);
    };
    await expect(cached({ name: 'cosmos', check: flaky }).check()).rejects.toThrow('container gone');
    clock = 29_999;
    await expect(cached({ name: 'cosmos', check: flaky }).check()).rejects.toThrow('container gone');
    expect(runs).toBe(1);
    clock = 30_000;
    await expect(cached({ name: 'cosmos', check: flaky }).check()).resolves.toBe('run 2');
    expect(runs).toBe(2);
  });

  it('shares a run under way and keeps each name apart', async () => {
    const cached = healthCache(30_000, () => 0);
    let release: (detail: string) => void = () => undefined;
    let runs = 0;
    const slow = () => {
      runs += 1;
      return new Promise<string>((resolve) => (release = resolve));
    };
    const first = cached({ name: 'llm', check: slow }).check();
    const second = cached({ name: 'llm', check: slow }).check();
    release('answered');
    expect(await Promise.all([first, second])).toEqual(['answered', 'answered']);
    expect(runs).toBe(1);
    await expect(cached({ name: 'other', check: () => Promise.resolve('own') }).check()).resolves.toBe('own');
  });

  it('checks on every poll with a ttl of 0', async () => {
    const cached = healthCache(0, () => 0);
    let runs = 0;
    const check = () => Promise.resolve(String((runs += 1)));
    await cached({ name: 'a', check }).check();
    await cached({ name: 'a', check }).check();
    expect(runs).toBe(2);
  });
});
