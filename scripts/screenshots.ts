// `npm run screenshots`: the web client's main states at desktop and phone width, light and dark, taken in Chromium
// against a local runtime with the offline model, into docs/screenshots/ (committed, for reviewers to look at).
// Outside `npm test`: a picture is for people to judge, not a test to pass.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { ChatApi, TurnTrace } from '../bench/chat-clients.js';
import { createLogHandler } from '../local/log.js';
import { startLocalRuntime, type LocalRuntime } from '../local/runtime.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/support/chromium.js';
import { ensureWebClient } from '../web/build.js';

const root = fileURLToPath(new URL('..', import.meta.url));
export const SCREENSHOTS_DIR = 'docs/screenshots';
const USER = 'user_001';

const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/** A question that shows reasoning, a tool call and its result with the offline model. */
const QUESTION = 'Think it through, then use the add_numbers tool to add 2 and 3.';

interface Shot {
  name: string;
  /** Only at this width; both when absent. */
  only?: keyof typeof VIEWPORTS;
  /** Brings the page to the state; false when this client has no such state yet (nothing is saved). */
  act(page: Page): Promise<boolean>;
}

/**
 * Opens a drawer of the phone layout from its header button, if the client has it, once the drawer before it is
 * closed (a drawer is modal: its overlay would take the click), and waits for what it lists.
 */
async function openRegion(page: Page, button: string, drawer: string, content: RegExp): Promise<boolean> {
  // An open drawer hides the rest of the page from the accessibility tree, the header's buttons too.
  if ((await page.getByRole('dialog').count()) > 0) await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  const tab = page.getByRole('banner').getByRole('button', { name: button, exact: true });
  if ((await tab.count()) === 0) return false;
  await tab.first().click();
  const region = page.getByRole('dialog', { name: drawer });
  await region.getByText(content).first().waitFor({ timeout: 60_000 });
  // The drawer slides in: let it finish before the picture.
  await page.waitForTimeout(400);
  return true;
}

const SHOTS: Shot[] = [
  { name: 'chat-new', act: () => Promise.resolve(true) },
  {
    name: 'chat-answer',
    async act(page) {
      const input = page.locator('#composer-input');
      await input.fill(QUESTION);
      await input.press('Enter');
      await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 120_000 });
      await page.locator('article[aria-label="Answer"] .message-body').first().waitFor({ timeout: 120_000 });
      // The tool call is collapsed by default; open it so the picture shows what it holds.
      const tool = page.locator('details.tool-call summary');
      if ((await tool.count()) > 0) await tool.first().click();
      return true;
    },
  },
  {
    name: 'conversations',
    only: 'phone',
    act: (page) => openRegion(page, 'Conversations', 'Conversations', /Lisbon/),
  },
  {
    name: 'memory-and-knowledge',
    only: 'phone',
    act: (page) => openRegion(page, 'Memory & knowledge', 'Memory and knowledge', /Lisbon/),
  },
];

/** One earlier conversation, so the sidebar and the memory have something to show. */
async function seedConversation(runtime: LocalRuntime): Promise<void> {
  const api = new ChatApi(runtime.url);
  const sessionId = await api.startSession(USER);
  const trace = new TurnTrace();
  const stream = await api.postChat(
    USER,
    sessionId,
    randomUUID(),
    'I am planning a weekend in Lisbon in May.',
  );
  await api.readStream(USER, stream, trace);
  // The history and memory workers run after the turn: wait until they are done.
  for (let round = 0; round < 3; round += 1) {
    await runtime.serviceBus.idle();
    await runtime.durable.idle();
  }
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`needs Chromium at ${CHROMIUM} (apt-get install chromium)`);
  const built = await ensureWebClient(root);
  if (built.built) console.log(`built the web client (${built.reason ?? 'stale'})`);
  const outDir = path.join(root, SCREENSHOTS_DIR);
  await mkdir(outDir, { recursive: true });
  // Pictures of states the client no longer has must not linger.
  for (const file of await readdir(outDir)) if (file.endsWith('.png')) await rm(path.join(outDir, file));

  const runtime = await startLocalRuntime({
    port: 0,
    dataDir: undefined,
    settings: {
      OFFLINE_MODEL_TTFT_MS: '0',
      OFFLINE_MODEL_TOKENS_PER_SECOND: '0',
      LOCAL_WEB_ROOT: path.join(root, 'dist', 'web'),
    },
    logHandler: createLogHandler('critical'),
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const saved: string[] = [];
  try {
    await seedConversation(runtime);
    for (const colorScheme of ['light', 'dark'] as const)
      for (const width of ['desktop', 'phone'] as const) {
        const viewport = VIEWPORTS[width];
        const context = await browser.newContext({ viewport, colorScheme, deviceScaleFactor: 1 });
        const page = await context.newPage();
        await page.goto(`${runtime.url}/?user=${USER}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        for (const shot of SHOTS) {
          if (shot.only !== undefined && shot.only !== width) continue;
          if (!(await shot.act(page))) {
            console.log(`skipped ${shot.name} (${width}): this client has no such view yet`);
            continue;
          }
          const file = `${shot.name}-${width}-${colorScheme}.png`;
          await page.screenshot({ path: path.join(outDir, file), fullPage: false });
          saved.push(file);
        }
        await context.close();
      }
  } finally {
    await browser.close();
    await runtime.stop();
  }
  console.log(`Saved ${saved.length} screenshots in ${SCREENSHOTS_DIR}/: ${saved.join(', ')}`);
}

await main();
