// GET /api/health in process: anonymous, 200 when every dependency answers, 503 naming the one that does not.
import { describe, expect, it } from 'vitest';
import { callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp } from '../test/support/in-memory-ports.js';
import { healthEndpoint } from './health.js';

describe('GET /api/health', () => {
  it('answers anyone with the state of each dependency', async () => {
    const app = createTestApp({
      healthChecks: [{ name: 'cosmos', check: () => Promise.resolve('reachable') }],
    });
    const reply = await callEndpoint(healthEndpoint, app);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(await reply.json()).toMatchObject({
      status: 'ok',
      environment: 'local',
      dependencies: { cosmos: { status: 'up', detail: 'reachable' } },
    });
  });

  it('is 503 when a dependency fails, and says which', async () => {
    const app = createTestApp({
      healthChecks: [
        { name: 'cosmos', check: () => Promise.resolve('reachable') },
        { name: 'llm', check: () => Promise.reject(new Error('connection refused')) },
      ],
    });
    const reply = await callEndpoint(healthEndpoint, app);
    expect(reply.status).toBe(503);
    expect(await reply.json()).toMatchObject({
      status: 'degraded',
      failing: ['llm'],
      dependencies: { cosmos: { status: 'up' }, llm: { status: 'down', detail: 'connection refused' } },
    });
  });
});
