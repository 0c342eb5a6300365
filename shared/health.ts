// Health of the app's dependencies for GET /api/health: every check runs concurrently with a time
// budget, one slow or failing dependency is reported as such without hiding the others, and the report
// names what is down. Checks that cost a request can be cached so that frequent polls cost little.
import { z } from 'zod';

export interface HealthCheck {
  name: string;
  /** Resolves with a short description when the dependency answers; rejects (or times out) when it does not. */
  check: () => Promise<string>;
}

export const dependencyHealthSchema = z.object({
  status: z.enum(['up', 'down']),
  detail: z.string(),
  latencyMs: z.number(),
});
export type DependencyHealth = z.infer<typeof dependencyHealthSchema>;

export const healthReportSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  /** The dependencies that are down, so an operator (or a probe) needs to read no further. */
  failing: z.array(z.string()),
  dependencies: z.record(z.string(), dependencyHealthSchema),
});
export type HealthReport = z.infer<typeof healthReportSchema>;

/** GET /api/health's body, 200 or 503: the report and where the app runs. */
export const healthAnswerSchema = healthReportSchema.extend({ environment: z.string() });

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
  const failing = results.filter(([, health]) => health.status === 'down').map(([name]) => name);
  return { status: failing.length === 0 ? 'ok' : 'degraded', failing, dependencies };
}

/**
 * Wraps checks so that each (by name) runs at most once per `ttlMs`: polls within that time share the last answer
 * (up or down), and polls that arrive while it runs wait for the same run. A ttl of 0 checks on every poll. The
 * check given with each poll is the one run, so a check bound to an invocation may be wrapped anew each time.
 */
export function healthCache(
  ttlMs: number,
  now: () => number = Date.now,
): (check: HealthCheck) => HealthCheck {
  const last = new Map<string, { at: number; answer: Promise<string> }>();
  return ({ name, check }) => ({
    name,
    check: () => {
      const cached = last.get(name);
      if (cached !== undefined && now() - cached.at < ttlMs) return cached.answer;
      const answer = check();
      // The cache keeps a rejection for later polls; this keeps Node from calling it unhandled meanwhile.
      answer.catch(() => undefined);
      last.set(name, { at: now(), answer });
      return answer;
    },
  });
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
