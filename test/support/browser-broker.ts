// The e2e project's globalSetup: a loopback broker that, on the first browser test's request, builds the web client
// if stale and launches one Chromium server for the whole run; test files (separate workers) connect to it.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserServer } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { ensureWebClient, hasWebClient } from '../../web/build.js';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The broker's URL: GET /browser answers `{ wsEndpoint }`, GET /web `{ built }` (or 500 with why not). */
    browserBroker: string;
  }
}

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `make` once, however many requests ask; a failure is remembered and repeated to every asker. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | undefined;
  return () => (result ??= make());
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let server: BrowserServer | undefined;
  const webClient = once(async () => {
    if (!hasWebClient(root)) return { built: false };
    return ensureWebClient(root);
  });
  const browser = once(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium)`);
    server = await chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    return { wsEndpoint: server.wsEndpoint() };
  });
  const routes: Record<string, () => Promise<unknown>> = { '/browser': browser, '/web': webClient };

  const broker = createServer((req, res) => {
    const route = routes[req.url ?? ''];
    if (route === undefined) {
      res.writeHead(404).end();
      return;
    }
    route().then(
      (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (error: unknown) =>
        res
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(error instanceof Error ? error.message : String(error)),
    );
  });
  broker.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', resolve));
  project.provide('browserBroker', `http://127.0.0.1:${(broker.address() as AddressInfo).port}`);

  return async () => {
    broker.closeAllConnections();
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    await server?.close();
  };
}
