// Pictures of the web client for a person to look at: a local runtime with the offline model serving the built
// client, a conversation with a tool call and a cited document, then each view at phone and desktop size.
// Usage: npm run build:web && npx tsx test/support/browser-look.ts [out-dir]   (default /tmp/web-look)
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from './browser-broker.js';
import { WEB_ROOT } from './browser.js';
import { ChatClient, expectStatus } from './chat-client.js';
import { settle, startTestRuntime } from './local-runtime.js';

const HANDBOOK = fileURLToPath(new URL('../../samples/handbook.md', import.meta.url));
const out = process.argv[2] ?? '/tmp/web-look';
mkdirSync(out, { recursive: true });

const runtime = await startTestRuntime({ settings: { LOCAL_WEB_ROOT: WEB_ROOT } });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
try {
  const client = new ChatClient(runtime.url, 'user_002');
  const sessionId = await client.startSession();
  await client.stream(
    sessionId,
    await client.send(
      sessionId,
      'I love sailing. Think it through, then use the add_numbers tool to add 2 and 3.',
    ),
    { timeoutMs: 60_000 },
  );
  const form = new FormData();
  form.append('file', new Blob([readFileSync(HANDBOOK)], { type: 'text/markdown' }), 'handbook.md');
  await expectStatus(
    await fetch(`${runtime.url}/api/knowledge/documents`, {
      method: 'POST',
      headers: client.headers(),
      body: form,
    }),
    202,
  );
  await settle(runtime);
  const cited = await client.startSession();
  await client.stream(cited, await client.send(cited, 'What does the handbook say about parental leave?'), {
    timeoutMs: 60_000,
  });
  await settle(runtime);

  const sizes = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } };
  for (const [size, viewport] of Object.entries(sizes))
    for (const scheme of ['light', 'dark'] as const) {
      const context = await browser.newContext({ viewport, colorScheme: scheme });
      const page = await context.newPage();
      const shot = async (name: string, act?: (page: Page) => Promise<unknown>) => {
        await act?.(page);
        await page.waitForTimeout(400);
        await page.screenshot({ path: join(out, `${name}-${size}-${scheme}.png`) });
        process.stdout.write(`${join(out, `${name}-${size}-${scheme}.png`)}\n`);
      };
      await page.goto(`${runtime.url}/?user=user_002`);
      await shot('new');
      await page.goto(`${runtime.url}/?user=user_002&session=${cited}`);
      await page.getByRole('article', { name: 'Answer' }).waitFor();
      await shot('cited');
      await page.goto(`${runtime.url}/?user=user_002&session=${sessionId}`);
      await page.getByRole('article', { name: 'Answer' }).waitFor();
      await shot('answer');
      if (size === 'phone') {
        await shot('conversations', (p) => p.getByRole('button', { name: 'Conversations' }).click());
        await page.keyboard.press('Escape');
        await shot('memory', (p) => p.getByRole('button', { name: 'Memory & knowledge' }).click());
      }
      await context.close();
    }
} finally {
  await browser.close();
  await runtime.stop();
}
