// The chat's habits in Chromium against the local runtime and a scripted model: the log does not fight a reader who
// scrolls up, a failed turn shows its error and retries, Escape stops, a shortcut starts a new chat, copy, the
// reasoning's time kept, starters, the tab's title and the theme button.
import type { Page } from 'playwright-core';
import { afterAll, expect, it } from 'vitest';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import type { ChatCompletionRequest } from '../support/scripted-model.js';

const LONG = '[a long answer]';
const FAIL = '[fail while failing]';
const THINK = '[think first]';
const HOLD = '[hold the answer]';
const FIRST = '[a first answer held]';
const LINES = 150;
const LINES_BEFORE_HOLD = 120;
const WORDS_PER_LINE = 6;
const LONG_ANSWER = Array.from({ length: LINES }, (_, i) => `Line ${i + 1} of the answer.`).join('\n\n');
const UI_TIMEOUT = 120_000;

/** What the tests read of the page's globals (the test's tsconfig has no DOM types). */
interface ScrollState {
  top: number;
  fromBottom: number;
}

/** The log as the wheel test drives it: an element that receives a wheel event, then scrolls. */
interface WheelTarget {
  scrollTop: number;
  dispatchEvent(event: unknown): boolean;
  ownerDocument: { defaultView: { WheelEvent: new (type: string, init: object) => unknown } };
}

function userText(request: ChatCompletionRequest): string {
  return request.messages.findLast((message) => message.role === 'user')?.content ?? '';
}

function released(): { promise: Promise<void>; release: () => void } {
  let release: () => void = () => {};
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

// Made anew by each attempt of the test that holds it (a retry must hold the answer again).
let long = released();
const thinking = released();
const held = released();
const first = released();
let failing = true;

describeBrowser('the chat view’s habits', () => {
  const web = useWebRuntime({
    settings: { LLM_MAX_RETRIES: '0' },
    script: (request) => {
      const text = userText(request);
      if (request.stream !== true) return { content: 'A title' };
      if (text.includes(LONG))
        return {
          content: LONG_ANSWER,
          hold: { afterChunks: LINES_BEFORE_HOLD * WORDS_PER_LINE, until: long.promise },
        };
      if (text.includes(FAIL) && failing) throw new Error('the model is down for this test');
      if (text.includes(THINK))
        return {
          reasoning: 'Let me think about it.',
          content: 'Done thinking.',
          hold: { afterChunks: 5, until: thinking.promise },
        };
      if (text.includes(FIRST))
        return {
          content: 'The first answer arrives in parts.',
          hold: { afterChunks: 2, until: first.promise },
        };
      if (text.includes(HOLD))
        return {
          content: 'Kept words then words never sent.',
          hold: { afterChunks: 2, until: held.promise },
        };
      return { content: `You said: ${text}` };
    },
  });
  afterAll(() => {
    long.release();
    thinking.release();
    held.release();
    first.release();
  });

  async function send(page: Page, text: string): Promise<void> {
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill(text);
    await composer.press('Enter');
  }
  const answers = (page: Page) => page.getByRole('article', { name: 'Answer' });
  const idle = (page: Page) =>
    expect.poll(() => page.getByRole('button', { name: 'Send' }).count(), { timeout: UI_TIMEOUT }).toBe(1);
  const scrollState = (page: Page) =>
    page
      .getByRole('log', { name: 'Messages' })
      .evaluate((element: { scrollTop: number; scrollHeight: number; clientHeight: number }) => ({
        top: element.scrollTop,
        fromBottom: element.scrollHeight - element.scrollTop - element.clientHeight,
      })) as Promise<ScrollState>;
  const focusedId = (page: Page) => page.evaluate('document.activeElement?.id');

  // The Markdown renderer is a chunk of its own: here it arrives only once the reader has scrolled up (as on a slow
  // network or a busy machine), so the swap from the plain text to the rendered answer happens under the reader.
  it(
    'follows a long answer at the bottom, keeps the place of a reader who scrolls up, and jumps back',
    { timeout: 180_000 },
    async () => {
      long = released();
      const { page, consoleErrors } = await web.open({ viewport: { width: 1280, height: 700 } });
      const renderer = released();
      await page.route('**/assets/Markdown-*.js', async (route) => {
        await renderer.promise;
        await route.continue();
      });
      await send(page, `Tell me a lot ${LONG}`);
      const answer = answers(page);
      await expect
        .poll(() => answer.textContent(), { timeout: UI_TIMEOUT })
        .toContain(`Line ${LINES_BEFORE_HOLD} of`);
      // At the bottom while it streams.
      await expect
        .poll(async () => (await scrollState(page)).fromBottom, { timeout: UI_TIMEOUT })
        .toBeLessThan(40);
      expect(await page.getByRole('button', { name: 'Jump to latest' }).count()).toBe(0);

      // The reader turns the wheel up and the log scrolls 800 px: both as the page receives them, in that order (a
      // synthetic wheel through the mouse can be dropped by a busy headless Chromium before it scrolls anything).
      await page.getByRole('log', { name: 'Messages' }).evaluate((element: WheelTarget) => {
        element.dispatchEvent(
          new element.ownerDocument.defaultView.WheelEvent('wheel', { deltaY: -800, bubbles: true }),
        );
        element.scrollTop -= 800;
      });
      await expect.poll(async () => (await scrollState(page)).fromBottom).toBeGreaterThan(400);
      const reading = (await scrollState(page)).top;
      await page.getByRole('button', { name: 'Jump to latest' }).waitFor({ timeout: UI_TIMEOUT });

      // The renderer lays the answer out as the plain text was: the reader's place does not move.
      renderer.release();
      await expect
        .poll(() => answer.locator('[data-markdown-pending]').count(), { timeout: UI_TIMEOUT })
        .toBe(0);
      expect(Math.abs((await scrollState(page)).top - reading)).toBeLessThanOrEqual(2);

      long.release();
      await expect.poll(() => answer.textContent(), { timeout: UI_TIMEOUT }).toContain(`Line ${LINES} of`);
      await idle(page);
      // The rest of the answer arrived and was stored; the reader's place did not move.
      expect(Math.abs((await scrollState(page)).top - reading)).toBeLessThanOrEqual(2);
      expect((await scrollState(page)).fromBottom).toBeGreaterThan(400);

      await page.getByRole('button', { name: 'Jump to latest' }).click();
      await expect
        .poll(async () => (await scrollState(page)).fromBottom, { timeout: UI_TIMEOUT })
        .toBeLessThan(40);
      await expect.poll(() => page.getByRole('button', { name: 'Jump to latest' }).count()).toBe(0);
      expect(consoleErrors).toEqual([]);
    },
  );

  it('shows a failed turn’s error with its code, and Retry sends the message again', async () => {
    const { page } = await web.open();
    await send(page, `Answer me ${FAIL}`);
    const question = page.getByRole('article', { name: 'Your message' });
    const notice = question.getByRole('status');
    await expect
      .poll(() => notice.textContent(), { timeout: UI_TIMEOUT })
      .toMatch(/^This message was not answered: .+\([a-z_.-]+\)$/);
    expect(await page.getByText('The connection dropped').count()).toBe(0);

    failing = false;
    await question.getByRole('button', { name: 'Retry' }).click();
    await expect
      .poll(() => answers(page).last().textContent(), { timeout: UI_TIMEOUT })
      .toContain(`You said: Answer me ${FAIL}`);
    await idle(page);
    expect(await page.getByRole('article', { name: 'Your message' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Retry' }).count()).toBe(0);
  }, 180_000);

  it('stops the answer on Escape', async () => {
    const { page, consoleErrors } = await web.open();
    await send(page, `Talk a while ${HOLD}`);
    await expect.poll(() => answers(page).textContent(), { timeout: UI_TIMEOUT }).toContain('Kept');
    await page.keyboard.press('Escape');
    await idle(page);
    await expect.poll(() => answers(page).textContent(), { timeout: UI_TIMEOUT }).toContain('Stopped');
    expect(await answers(page).textContent()).not.toContain('never sent');
    expect(consoleErrors).toEqual([]);
  }, 180_000);

  it('keeps "Thought for N s" once the answer has ended', async () => {
    const { page, consoleErrors } = await web.open();
    await send(page, `Consider this ${THINK}`);
    const answer = answers(page);
    await expect
      .poll(() => answer.locator('summary').first().textContent(), { timeout: UI_TIMEOUT })
      .toBe('Thinking…');
    await page.waitForTimeout(1_200);
    thinking.release();
    await expect.poll(() => answer.textContent(), { timeout: UI_TIMEOUT }).toContain('Done thinking.');
    await idle(page);
    // Read back from history once it ended, the answer keeps its reasoning and its time.
    await expect
      .poll(() => answer.locator('summary').first().textContent(), { timeout: UI_TIMEOUT })
      .toMatch(/^Thought for \d+ s$/);
    await page.waitForTimeout(3_000);
    expect(await answer.locator('summary').first().textContent()).toMatch(/^Thought for \d+ s$/);
    // The sidebar counts the open conversation's two messages, once its turn has ended.
    await expect
      .poll(() => page.locator('[aria-current="page"] .panel-meta').textContent(), { timeout: UI_TIMEOUT })
      .toMatch(/ · 2 messages$/);
    // A page opened afresh has only history to show it from: the reasoning and its time are there.
    await page.reload();
    await expect
      .poll(() => answers(page).locator('summary').first().textContent(), { timeout: UI_TIMEOUT })
      .toMatch(/^Thought for \d+ s$/);
    expect(await answers(page).locator('details').first().textContent()).toContain('Let me think about it.');
    expect(consoleErrors).toEqual([]);
  }, 180_000);

  it('keeps the "Not remembered" mark of a message sent with "Don’t remember this" on a reloaded page', async () => {
    const { page, consoleErrors } = await web.open();
    await page.getByRole('checkbox', { name: 'Don’t remember this' }).check();
    await send(page, 'Forget me');
    await expect
      .poll(() => answers(page).textContent(), { timeout: UI_TIMEOUT })
      .toContain('You said: Forget me');
    await idle(page);
    const question = page.getByRole('article', { name: 'Your message' });
    await expect.poll(() => question.textContent(), { timeout: UI_TIMEOUT }).toContain('Not remembered');
    await page.reload();
    await expect
      .poll(() => page.getByRole('article', { name: 'Your message' }).textContent(), { timeout: UI_TIMEOUT })
      .toContain('Not remembered');
    expect(consoleErrors).toEqual([]);
  }, 180_000);

  it('rates an answer with a thumb, keeps the rating on a reloaded page, and takes it back', async () => {
    const { page, consoleErrors } = await web.open();
    await send(page, 'Rate me');
    await expect
      .poll(() => answers(page).textContent(), { timeout: UI_TIMEOUT })
      .toContain('You said: Rate me');
    await idle(page);
    const thumb = (name: string) => answers(page).getByRole('button', { name });
    // The page shows a rating at once; the reloads below wait for history's answer first.
    const press = async (name: string) => {
      const stored = page.waitForResponse((response) => response.url().endsWith('/feedback'));
      await thumb(name).click();
      expect((await stored).status()).toBe(200);
    };
    await press('Good answer');
    await expect
      .poll(() => thumb('Good answer').getAttribute('aria-pressed'), { timeout: UI_TIMEOUT })
      .toBe('true');
    // What the page shows is what history kept: after a reload, and changed to the other thumb.
    await page.reload();
    await expect
      .poll(() => thumb('Good answer').getAttribute('aria-pressed'), { timeout: UI_TIMEOUT })
      .toBe('true');
    await press('Bad answer');
    await page.reload();
    await expect
      .poll(() => thumb('Bad answer').getAttribute('aria-pressed'), { timeout: UI_TIMEOUT })
      .toBe('true');
    expect(await thumb('Good answer').getAttribute('aria-pressed')).toBe('false');
    await press('Bad answer');
    await page.reload();
    await thumb('Bad answer').waitFor({ timeout: UI_TIMEOUT });
    expect(await thumb('Bad answer').getAttribute('aria-pressed')).toBe('false');
    expect(consoleErrors).toEqual([]);
  }, 180_000);

  it('starts from a starter, copies the answer, titles the tab, and opens a new chat with Ctrl+Shift+O', async () => {
    const { page, context, consoleErrors } = await web.open();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: web.url });
    // Focus is in the composer from the start.
    await expect.poll(() => focusedId(page)).toBe('composer-input');
    const starter = page.getByRole('list', { name: 'Starters' }).getByRole('button').first();
    const starterText = (await starter.textContent()) ?? '';
    await starter.click();
    const answer = answers(page);
    await expect
      .poll(() => answer.textContent(), { timeout: UI_TIMEOUT })
      .toContain(`You said: ${starterText}`);
    await idle(page);

    await answer.getByRole('button', { name: 'Copy answer' }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(`You said: ${starterText}`);
    expect(await answer.getByRole('button', { name: 'Copied' }).count()).toBe(1);

    // The conversation joins the sidebar under Today, and the tab takes its title.
    const sidebar = page.getByRole('complementary', { name: 'Conversations' });
    const open = sidebar.locator('[aria-current="page"] .conversation-title');
    await open.waitFor({ timeout: UI_TIMEOUT });
    expect(await sidebar.getByRole('heading', { name: 'Today' }).count()).toBe(1);
    await expect.poll(async () => page.title()).toBe(`${await open.textContent()} · Memory chat`);

    await page.keyboard.press('Control+Shift+O');
    await page.getByRole('heading', { name: 'How can I help?' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await answers(page).count()).toBe(0);
    expect(new URL(page.url()).searchParams.has('session')).toBe(false);
    await expect.poll(() => page.title()).toBe('Memory chat');
    await expect.poll(() => focusedId(page)).toBe('composer-input');
    expect(consoleErrors).toEqual([]);
  }, 180_000);

  it('shows the question above the answer after a reload during a new chat’s first answer', async () => {
    const { page, consoleErrors } = await web.open();
    await send(page, `Hello there ${FIRST}`);
    await expect.poll(() => answers(page).textContent(), { timeout: UI_TIMEOUT }).toContain('The');
    await expect.poll(() => new URL(page.url()).searchParams.has('session')).toBe(true);
    await page.reload();
    const question = page.getByRole('article', { name: 'Your message' });
    await expect
      .poll(() => question.textContent(), { timeout: UI_TIMEOUT })
      .toContain(`Hello there ${FIRST}`);
    first.release();
    await expect
      .poll(() => answers(page).textContent(), { timeout: UI_TIMEOUT })
      .toContain('The first answer arrives in parts.');
    await idle(page);
    expect(await question.count()).toBe(1);
    expect(await answers(page).count()).toBe(1);
    // History does not know the conversation before its first answer ends: Chromium logs that 404, nothing else.
    expect(consoleErrors.filter((line) => !line.includes('status of 404'))).toEqual([]);
  }, 180_000);

  it('starts a new chat, and names the new user in the address, when another dev user is picked', async () => {
    const { page, consoleErrors } = await web.open({ userId: 'user_001' });
    await send(page, 'A message of the first user');
    await expect.poll(() => answers(page).textContent(), { timeout: UI_TIMEOUT }).toContain('You said');
    await idle(page);
    await expect.poll(() => new URL(page.url()).searchParams.has('session')).toBe(true);

    await page.getByRole('combobox', { name: 'Dev user' }).selectOption('user_002');
    await page.getByRole('heading', { name: 'How can I help?' }).waitFor({ timeout: UI_TIMEOUT });
    const address = new URL(page.url());
    expect(address.searchParams.has('session')).toBe(false);
    expect(address.searchParams.get('user')).toBe('user_002');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  }, 180_000);

  it('names the theme button by what it will do', async () => {
    const { page } = await web.open({ colorScheme: 'light' });
    const header = page.getByRole('banner');
    await header.getByRole('button', { name: 'Switch to dark theme' }).click();
    expect(await page.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    await header.getByRole('button', { name: 'Switch to light theme' }).click();
    expect(await page.evaluate('document.documentElement.dataset.theme')).toBe('light');
  });
});
