// azd's postdeploy hook: waits for the deployed API's /api/health to answer 200 (a fresh deployment warms up for a
// while), then prints where the web client is. A health check that never passes fails the hook, saying why.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface HealthWait {
  attempts: number;
  delayMs: number;
  /** Each request's own limit. */
  requestTimeoutMs: number;
}

export const DEFAULT_WAIT: HealthWait = { attempts: 12, delayMs: 10_000, requestTimeoutMs: 30_000 };

export type HealthResult =
  { ok: true; attempts: number; body: string } | { ok: false; attempts: number; last: string };

/** The health endpoint under the function app's URL (SERVICE_API_URI). */
export function healthUrl(apiUri: string | undefined): string {
  const base = apiUri?.trim();
  if (base === undefined || !/^https:\/\/[^\s/]+\/?$/.test(base))
    throw new Error(
      `SERVICE_API_URI is ${base ? `"${base}", not an https origin` : 'not set'}: run \`azd provision\` first.`,
    );
  return `${base.replace(/\/$/, '')}/api/health`;
}

/**
 * Calls `url` until it answers 200, at most `attempts` times `delayMs` apart (a 401 or 403 ends it at once); says what
 * the last answer was.
 */
export async function waitForHealth(
  url: string,
  wait: HealthWait = DEFAULT_WAIT,
  fetchImpl: typeof fetch = fetch,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<HealthResult> {
  let last = 'no answer';
  for (let attempt = 1; attempt <= wait.attempts; attempt++) {
    try {
      const response = await fetchImpl(url, { signal: AbortSignal.timeout(wait.requestTimeoutMs) });
      const body = await response.text();
      if (response.status === 200) return { ok: true, attempts: attempt, body };
      last = `HTTP ${response.status}: ${body.slice(0, 500)}`;
      // The app is up but guards the endpoint (App Service authentication): waiting changes nothing.
      if (response.status === 401 || response.status === 403) return { ok: false, attempts: attempt, last };
    } catch (error) {
      last = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    if (attempt < wait.attempts) await sleep(wait.delayMs);
  }
  return { ok: false, attempts: wait.attempts, last };
}

async function main(): Promise<void> {
  const url = healthUrl(process.env.SERVICE_API_URI);
  console.log(`Waiting for ${url} to answer...`);
  const result = await waitForHealth(url);
  if (!result.ok) {
    console.error(
      `${url} did not answer 200 after ${result.attempts} attempts; the last answer was ${result.last}\n` +
        'A 503 names the failing dependencies (`failing`); a 401 or 403 means App Service authentication guards ' +
        '/api/health; otherwise see the function app in the Azure portal ' +
        '(Application Insights → Failures, or Log stream). docs/deploy.md lists the usual causes.',
    );
    process.exit(1);
  }
  console.log(`The API is healthy (${url}, after ${result.attempts} attempt(s)).`);
  const web = process.env.SERVICE_WEB_URI?.trim();
  console.log(web ? `Open the web client: ${web.replace(/\/?$/, '/')}` : 'No web client was deployed.');
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
