// Chromium tests' harness: one browser for the whole e2e run (test/support/browser-broker.ts launches it), a local
// runtime serving the built web client at `/` with a scripted model, and pages opened as a dev user that record
// console errors. Usage: see `useWebRuntime` below.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import type { LlmApi } from '../../shared/llm/llm-gateway.js';
import { CHROMIUM } from './chromium.js';
import { startTestRuntime } from './local-runtime.js';
import { startScriptedModel, type Script, type ScriptedModel } from './scripted-model.js';

export { CHROMIUM, CHROMIUM_ARGS } from './chromium.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Where `npm run build:web` (and the broker) put the built client. */
export const WEB_ROOT = join(root, 'dist', 'web');

/** In CI a browser test must run: a missing Chromium fails it there instead of skipping. */
export const browserRuns = existsSync(CHROMIUM) || process.env.CI !== undefined;

/** `describe` for browser tests: skipped, with the reason shown, on a machine without Chromium outside CI. */
export function describeBrowser(name: string, body: () => void): void {
  if (browserRuns) describe(name, body);
  else it.skip(`${name}: needs ${CHROMIUM} (apt-get install chromium)`, () => {});
}

async function askBroker<T>(path: string): Promise<T> {
  // A fresh connection per question: a reused keep-alive socket can be closed by the broker just as it is reused.
  const response = await fetch(`${inject('browserBroker')}${path}`, { headers: { connection: 'close' } });
  if (!response.ok) throw new Error(`the browser broker could not serve ${path}: ${await response.text()}`);
  return (await response.json()) as T;
}

let connected: Promise<Browser> | undefined;

/** The run's one Chromium, connected once per test file; `close()` on it only disconnects this file. */
export function sharedBrowser(): Promise<Browser> {
  connected ??= askBroker<{ wsEndpoint: string }>('/browser').then(({ wsEndpoint }) =>
    chromium.connect(wsEndpoint),
  );
  return connected;
}

async function disconnectBrowser(): Promise<void> {
  const browser = connected;
  connected = undefined;
  await (await browser?.catch(() => undefined))?.close();
}

/** Builds dist/web once per run if web/ changed since its last build; the folder to serve. */
export async function builtWebClient(): Promise<string> {
  await askBroker('/web');
  return WEB_ROOT;
}

/**
 * Settings that make a runtime of your own (e.g. a CrashableRuntime a test kills and restarts) serve the built
 * client at `/`: pass them with its other settings.
 */
export async function webClientSettings(): Promise<Record<string, string>> {
  return { LOCAL_WEB_ROOT: await builtWebClient() };
}

export interface WebRuntimeOptions {
  /** The scripted model's answers; absent: the offline model answers. */
  script?: Script;
  api?: LlmApi;
  /** More app or local runtime settings (they win over the harness's). */
  settings?: Record<string, string | undefined>;
  /** A data folder kept across restarts; absent: in memory. */
  dataDir?: string;
  /** Another built client to serve (a fixture page); default: the real one, built if stale. */
  webRoot?: string;
}

export interface WebRuntime {
  /** http://127.0.0.1:PORT: the page at `/`, the API at /api. */
  url: string;
  runtime: LocalRuntime;
  model: ScriptedModel | undefined;
  stop(): Promise<void>;
}

/** A local runtime in this process that serves the built client, answering with a scripted model if given. */
export async function startWebRuntime(options: WebRuntimeOptions = {}): Promise<WebRuntime> {
  const webRoot = options.webRoot ?? (await builtWebClient());
  const model =
    options.script === undefined
      ? undefined
      : await startScriptedModel(options.script, options.api === undefined ? {} : { api: options.api });
  try {
    const runtime = await startTestRuntime({
      ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
      settings: { ...model?.settings, LOCAL_WEB_ROOT: webRoot, ...options.settings },
    });
    return {
      url: runtime.url,
      runtime,
      model,
      stop: async () => {
        await runtime.stop();
        await model?.close();
      },
    };
  } catch (error) {
    await model?.close();
    throw error;
  }
}

export interface PageOptions {
  /** The dev user the page acts as (`?user=`); default user_001. */
  userId?: string;
  /** Path and query after the origin; default `/`. */
  path?: string;
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
}

export interface OpenedPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught exceptions of the page so far (a test usually expects none). */
  consoleErrors: string[];
  close(): Promise<void>;
}

/** Opens the page in a fresh context (its own storage) of the shared browser, as a dev user. */
export async function openPage(url: string, options: PageOptions = {}): Promise<OpenedPage> {
  const browser = await sharedBrowser();
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 800 },
    colorScheme: options.colorScheme ?? 'light',
  });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    // The location names the resource of a "Failed to load resource" error.
    if (message.type() === 'error') consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => consoleErrors.push(`uncaught: ${error.message}`));
  const target = new URL(options.path ?? '/', url);
  if (!target.searchParams.has('user')) target.searchParams.set('user', options.userId ?? 'user_001');
  await page.goto(target.toString());
  return { page, context, consoleErrors, close: () => context.close() };
}

export interface WebRuntimeFixture {
  readonly url: string;
  readonly runtime: LocalRuntime;
  /** The scripted model (its recorded requests), when the options gave a script. */
  readonly model: ScriptedModel | undefined;
  /** Opens the page as a dev user; closed after the file if the test does not close it. */
  open(options?: PageOptions): Promise<OpenedPage>;
}

/**
 * Registers a file's hooks: a web runtime started before its tests and stopped after them, and the shared browser
 * disconnected after them. Call inside `describeBrowser`:
 *
 *   describeBrowser('the chat view', () => {
 *     const web = useWebRuntime({ script: () => ({ content: 'Hello!' }) });
 *     it('answers', async () => {
 *       const { page, consoleErrors } = await web.open({ userId: 'user_002' });
 *       await page.getByRole('textbox', { name: 'Message' }).fill('Hi');
 *       ...
 *     });
 *   });
 */
export function useWebRuntime(options: WebRuntimeOptions = {}): WebRuntimeFixture {
  let web: WebRuntime | undefined;
  const pages: OpenedPage[] = [];
  const started = () => {
    if (web === undefined) throw new Error('the web runtime is not started: use it inside a test');
    return web;
  };
  beforeAll(async () => {
    web = await startWebRuntime(options);
  });
  afterAll(async () => {
    for (const page of pages.splice(0)) await page.close().catch(() => undefined);
    await web?.stop();
    await disconnectBrowser();
  });
  return {
    get url() {
      return started().url;
    },
    get runtime() {
      return started().runtime;
    },
    get model() {
      return started().model;
    },
    async open(pageOptions) {
      const page = await openPage(started().url, pageOptions);
      pages.push(page);
      return page;
    },
  };
}

/** For files that manage their own runtimes: disconnects the shared browser after the file's tests. */
export function useSharedBrowser(): void {
  afterAll(() => disconnectBrowser());
}
