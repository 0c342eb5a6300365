// `npm run bench:web`: time from pressing Enter in the web client (Chromium) to the answer's first token painted,
// beside the time from posting to the first token read by a plain SSE client, turn for turn in the same run against
// one local runtime. Prints p50/p90 of each; it asserts nothing about speed.
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { createLogHandler } from '../local/log.js';
import { startLocalRuntime } from '../local/runtime.js';
import { ensureWebClient } from '../web/build.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/support/chromium.js';
import { ChatApi } from './chat-clients.js';
import { percentile, round } from './figures.js';

const TURNS = Number(process.env.TURNS ?? 10);
/** The offline model's pace: a first token after this long, then this many tokens a second. */
const TTFT_MS = process.env.OFFLINE_MODEL_TTFT_MS ?? '200';
const TOKENS_PER_SECOND = process.env.OFFLINE_MODEL_TOKENS_PER_SECOND ?? '60';
const USER = 'user_001';
const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * In the page (as text: it runs in the browser, not in Node): arms a timer for the next turn. Enter's keydown
 * (capture phase, before the app sees it) starts it; the first animation frame after a new answer shows text stops
 * it (that frame paints the text).
 */
const ARM_TIMER = `(() => {
  const state = {};
  window.firstToken = state;
  document.getElementById('composer-input').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) state.enter = performance.now();
  }, { capture: true, once: true });
  const selector = 'article[aria-label="Answer"]';
  const before = document.querySelectorAll(selector).length;
  const observer = new MutationObserver(() => {
    const all = document.querySelectorAll(selector);
    const body = all.length > before ? all[all.length - 1].querySelector('.message-body') : null;
    if (body === null || body.textContent.trim() === '') return;
    observer.disconnect();
    requestAnimationFrame(() => (state.painted = performance.now()));
  });
  observer.observe(document.body, { subtree: true, childList: true, characterData: true });
})()`;

/** Milliseconds from Enter to the painted first token, once both are known. */
const ELAPSED = `(() => {
  const state = window.firstToken;
  return state.enter !== undefined && state.painted !== undefined ? state.painted - state.enter : undefined;
})()`;

async function browserTurn(page: Page, text: string): Promise<number> {
  // The chat view is a chunk of its own: the composer is there once it has loaded.
  const input = page.locator('#composer-input');
  await input.waitFor({ timeout: 120_000 });
  await page.evaluate(ARM_TIMER);
  await input.fill(text);
  await input.press('Enter');
  // Polled from here (the page's CSP refuses the string functions waitForFunction would evaluate); the figure is
  // the page's own clock, so the polling interval does not enter it.
  const deadline = Date.now() + 120_000;
  let elapsed: number | undefined;
  while ((elapsed = await page.evaluate<number | undefined>(ELAPSED)) === undefined) {
    if (Date.now() > deadline) throw new Error('no first token painted within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The next turn starts once this one has ended: the composer offers Send again.
  await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 120_000 });
  return elapsed;
}

function summary(name: string, values: number[]): string {
  return `${name}: p50 ${round(percentile(values, 50))} ms, p90 ${round(percentile(values, 90))} ms`;
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`needs Chromium at ${CHROMIUM} (apt-get install chromium)`);
  const built = await ensureWebClient(root);
  if (built.built) console.log(`built the web client (${built.reason ?? 'stale'})`);
  const runtime = await startLocalRuntime({
    port: 0,
    dataDir: undefined,
    settings: {
      OFFLINE_MODEL_TTFT_MS: TTFT_MS,
      OFFLINE_MODEL_TOKENS_PER_SECOND: TOKENS_PER_SECOND,
      LOCAL_WEB_ROOT: `${root}dist/web`,
    },
    logHandler: createLogHandler('critical'),
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.goto(`${runtime.url}/?user=${USER}`);
    const api = new ChatApi(runtime.url);
    const sessionId = await api.startSession(USER);
    const inBrowser: number[] = [];
    const overSse: number[] = [];
    // A warm-up turn of each kind, not counted: the first pays for connections and compilation.
    await browserTurn(page, 'Hello!');
    await api.firstContentMs(USER, sessionId, 'Hello!');
    for (let turn = 1; turn <= TURNS; turn += 1) {
      // Alternated, so both see the same machine load.
      inBrowser.push(await browserTurn(page, `Question ${turn}: what is ${turn} + ${turn}?`));
      overSse.push(await api.firstContentMs(USER, sessionId, `Question ${turn}: what is ${turn} + ${turn}?`));
    }
    console.log(
      `First token over ${TURNS} turns (offline model: first token after ${TTFT_MS} ms, ${TOKENS_PER_SECOND} tokens/s; ` +
        `load average ${loadavg()
          .map((load) => load.toFixed(1))
          .join(', ')}):`,
    );
    console.log(`  ${summary('Enter → first token painted in Chromium', inBrowser)}`);
    console.log(`  ${summary('POST → first token read by a plain SSE client', overSse)}`);
  } finally {
    await browser.close();
    await runtime.stop();
  }
}

await main();
