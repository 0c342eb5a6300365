// The chat view across interruptions, in Chromium: a page reloaded mid-answer shows the whole answer once, and a
// page whose runtime is killed mid-answer and restarted ends showing exactly the answer history stored.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  builtWebClient,
  describeBrowser,
  openPage,
  useSharedBrowser,
  useWebRuntime,
} from '../support/browser.js';
import { buildRuntime, CrashableRuntime } from '../support/crashable-runtime.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
} from '../support/scripted-model.js';

function userText(request: ChatCompletionRequest): string {
  return request.messages.findLast((message) => message.role === 'user')?.content ?? '';
}

const answerText = (page: Page) => page.getByRole('article', { name: 'Answer' }).allTextContents();
const occurrences = (text: string, part: string) => text.split(part).length - 1;

describeBrowser('the chat view across a reload', () => {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const web = useWebRuntime({
    script: () => ({
      content: 'Opening words of the answer, and its unmistakable closing words.',
      hold: { afterChunks: 2, until: held },
    }),
  });
  afterAll(() => release());

  it('shows the whole answer once after a reload mid-answer, with no gap and no repeat', async () => {
    const { page, consoleErrors } = await web.open();
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill('Say something long');
    await composer.press('Enter');
    await expect
      .poll(async () => (await answerText(page)).join(''), { timeout: 120_000 })
      .toContain('Opening');
    await expect.poll(() => page.url(), { timeout: 120_000 }).toContain('session=');

    await page.reload();
    await expect
      .poll(async () => (await answerText(page)).join(''), { timeout: 120_000 })
      .toContain('Opening');
    release();
    await expect
      .poll(async () => (await answerText(page)).join(''), { timeout: 120_000 })
      .toContain('unmistakable closing words.');
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).count(), { timeout: 120_000 }).toBe(1);
    const log = (await page.getByRole('log', { name: 'Messages' }).textContent()) ?? '';
    expect(occurrences(log, 'Opening words of the answer')).toBe(1);
    expect(occurrences(log, 'unmistakable closing words')).toBe(1);
    expect(await page.getByRole('article', { name: 'Answer' }).count()).toBe(1);
    // History answers 404 for a conversation until its first turn has ended, and Chromium logs that fetch.
    expect(consoleErrors.filter((error) => !/status of 404/.test(error))).toEqual([]);
  });
});

describeBrowser('the chat view across a crash', () => {
  useSharedBrowser();
  let model: ScriptedModel;
  let runtime: CrashableRuntime;
  let folder: string;
  let killed: () => void = () => {};
  const afterKill = new Promise<void>((resolve) => (killed = resolve));
  const QUESTION = 'Tell me about the crash';

  beforeAll(async () => {
    model = await startScriptedModel((request) => {
      const attempts = model.requests.filter((r) => r.stream === true && userText(r) === QUESTION).length;
      if (userText(request) === QUESTION && request.stream === true && attempts <= 1)
        return {
          content: 'A doomed first attempt whose words are discarded after the crash.',
          hold: { afterChunks: 3, until: afterKill },
        };
      return { content: 'The answer that survived the crash, told once and whole.' };
    });
    const entry = buildRuntime();
    folder = await mkdtemp(join(tmpdir(), 'web-chat-crash-'));
    runtime = new CrashableRuntime({
      entry,
      cwd: folder,
      dataDir: join(folder, 'data'),
      settings: { ...model.settings, LOCAL_WEB_ROOT: await builtWebClient() },
    });
    await runtime.start();
  });
  afterAll(async () => {
    killed();
    await runtime?.stop();
    await model?.close();
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  });

  it('ends showing exactly the stored answer after the runtime is killed mid-answer and restarted', async () => {
    const opened = await openPage(runtime.url!);
    const { page } = opened;
    try {
      const composer = page.getByRole('textbox', { name: 'Message' });
      await composer.fill(QUESTION);
      await composer.press('Enter');
      await expect
        .poll(async () => (await answerText(page)).join(''), { timeout: 120_000 })
        .toContain('doomed');
      const sessionId = new URL(page.url()).searchParams.get('session');
      expect(sessionId).not.toBeNull();

      await runtime.kill();
      killed();
      await runtime.start();

      await expect
        .poll(async () => (await answerText(page)).join(''), { timeout: 180_000 })
        .toContain('survived the crash');
      await expect
        .poll(() => page.getByRole('button', { name: 'Send' }).count(), { timeout: 120_000 })
        .toBe(1);
      const stored = await fetch(`${runtime.url}/api/history/conversations/${sessionId}`, {
        headers: { 'x-ms-client-principal-id': 'user_001' },
      });
      const { messages } = (await stored.json()) as { messages: { role: string; content: string }[] };
      const storedAnswer = messages.findLast((message) => message.role === 'assistant')?.content;
      expect(storedAnswer).toBe('The answer that survived the crash, told once and whole.');
      const shown = await answerText(page);
      expect(shown).toHaveLength(1);
      expect(shown[0]?.trim()).toContain(storedAnswer);
      expect(shown[0]).not.toContain('doomed');
    } finally {
      await opened.close();
    }
  });
});
