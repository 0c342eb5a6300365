import { describe, expect, it } from 'vitest';
import { checkHealth } from './health.js';

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
    expect(report.dependencies.ok?.status).toBe('up');
    expect(report.dependencies.broken).toMatchObject({ status: 'down', detail: 'connection refused' });
    expect(report.dependencies.slow).toMatchObject({ status: 'down', detail: 'no answer within 20 ms' });
  });
});
