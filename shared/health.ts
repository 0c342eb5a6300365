// Health of the app's dependencies for GET /api/health: every check runs concurrently with a time
// budget, and one slow or failing dependency is reported as such without hiding the others.

export interface HealthCheck {
  name: string;
  /** Resolves with a short description when the dependency answers; rejects (or times out) when it does not. */
  check: () => Promise<string>;
}

export interface DependencyHealth {
  status: 'up' | 'down';
  detail: string;
  latencyMs: number;
}

export interface HealthReport {
  status: 'ok' | 'degraded';
  dependencies: Record<string, DependencyHealth>;
}

export async function checkHealth(checks: readonly HealthCheck[], budgetMs: number): Promise<HealthReport> {
  const results = await Promise.all(
    checks.map(async ({ name, check }): Promise<[string, DependencyHealth]> => {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${budgetMs} ms`)), budgetMs);
      });
      try {
        const detail = await Promise.race([check(), timeout]);
        return [name, { status: 'up', detail, latencyMs: elapsed(started) }];
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        return [name, { status: 'down', detail, latencyMs: elapsed(started) }];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const dependencies = Object.fromEntries(results);
  const status = results.every(([, health]) => health.status === 'up') ? 'ok' : 'degraded';
  return { status, dependencies };
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
