// The chat view in Chromium against the local runtime and a scripted model: an answer streams in as Markdown, a
// tool call shows collapsed, stop, regenerate, edit and alternatives work, and hostile model output stays inert.
import type { Page } from 'playwright-core';
import { afterAll, expect, it } from 'vitest';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import type { ChatCompletionRequest } from '../support/scripted-model.js';

const TOOL = '[add with a tool]';
const HOLD = '[hold the answer]';
const STOP = '[an answer to stop]';
const COUNT = '[count the answers]';
const HOSTILE = '[hostile output]';
const HUGE_CODE_LINES = 1200;
const HOSTILE_ANSWER = [
  'Before the image <img src=x onerror="window.__pwned = 1"> after the image.',
  '',
  '<script>window.__pwned = 2</script>',
  '',
  'A [bad link](javascript:window.__pwned=3) and a [good link](https://example.com/docs).',
  '',
  '```js',
  ...Array.from({ length: HUGE_CODE_LINES }, (_, i) => `const line${i} = ${i};`),
  '```',
  '',
  'The end of the hostile answer.',
].join('\n');

/** What the tests read of the page's globals (the test's tsconfig has no DOM types). */
interface PageGlobals {
  document: { activeElement: unknown };
  __pwned?: unknown;
}

interface ScrollBox {
  scrollHeight: number;
  clientHeight: number;
  getBoundingClientRect(): { height: number };
  querySelectorAll(selector: string): { length: number };
}

function userText(request: ChatCompletionRequest): string {
  return request.messages.findLast((message) => message.role === 'user')?.content ?? '';
}

let release: () => void = () => {};
const held = new Promise<void>((resolve) => (release = resolve));
let releaseStopped: () => void = () => {};
const stoppedHold = new Promise<void>((resolve) => (releaseStopped = resolve));
const answersTo = new Map<string, number>();

describeBrowser('the chat view', () => {
  const web = useWebRuntime({
    script: (request) => {
      const text = userText(request);
      if (text.includes(TOOL)) {
        const answered = request.messages.some((message) => message.role === 'tool');
        return answered
          ? { content: 'The sum is **5**.' }
          : { toolCalls: [{ name: 'add_numbers', arguments: '{"a":2,"b":3}' }] };
      }
      if (text.includes(HOLD))
        return {
          content: 'First part of the answer, then **the rest** of it.',
          hold: { afterChunks: 2, until: held },
        };
      if (text.includes(STOP))
        return { content: 'Kept words then words never sent.', hold: { afterChunks: 2, until: stoppedHold } };
      if (text.includes(HOSTILE)) return { content: HOSTILE_ANSWER };
      if (text.includes(COUNT) && request.stream === true) {
        const count = (answersTo.get(text) ?? 0) + 1;
        answersTo.set(text, count);
        return { content: `Answer number ${count} to ${text.replace(COUNT, '').trim()}.` };
      }
      return { content: `You said: ${text}` };
    },
  });
  afterAll(() => {
    release();
    releaseStopped();
  });

  async function send(page: Page, text: string): Promise<void> {
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill(text);
    await composer.press('Enter');
  }

  const answers = (page: Page) => page.getByRole('article', { name: 'Answer' });
  const idle = (page: Page) =>
    expect.poll(() => page.getByRole('button', { name: 'Send' }).count(), { timeout: 120_000 }).toBe(1);

  it('sends on Enter, streams the answer in as Markdown and gives the composer its focus back', async () => {
    const { page, consoleErrors } = await web.open();
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill(`Tell me ${HOLD}`);
    await composer.press('Shift+Enter');
    await composer.pressSequentially('second line');
    expect(await composer.inputValue()).toBe(`Tell me ${HOLD}\nsecond line`);
    await composer.press('Enter');

    const answer = page.getByRole('article', { name: 'Answer' });
    // Held mid-answer: part of the text is painted while the answer is still open.
    await expect.poll(() => answer.getAttribute('aria-busy'), { timeout: 120_000 }).toBe('true');
    await expect.poll(() => answer.textContent(), { timeout: 120_000 }).toContain('First');
    expect(await answer.textContent()).not.toContain('the rest');
    expect(await page.getByRole('button', { name: 'Stop' }).isVisible()).toBe(true);
    release();

    await expect
      .poll(() => answer.textContent(), { timeout: 120_000 })
      .toContain('First part of the answer, then the rest of it.');
    await expect.poll(() => answer.getAttribute('aria-busy'), { timeout: 120_000 }).toBe('false');
    expect(await answer.locator('[data-streamdown="strong"]').textContent()).toBe('the rest');
    expect(await page.getByRole('article', { name: 'Your message' }).textContent()).toContain('second line');
    expect(await composer.inputValue()).toBe('');
    expect(
      await composer.evaluate(
        (element) => element === (globalThis as unknown as PageGlobals).document.activeElement,
      ),
    ).toBe(true);
    expect(consoleErrors).toEqual([]);
  });

  it('shows a tool call and its result collapsed, then the answer', async () => {
    const { page, consoleErrors } = await web.open();
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill(`What is 2 + 3? ${TOOL}`);
    await composer.press('Enter');

    const answer = page.getByRole('article', { name: 'Answer' });
    await expect.poll(() => answer.textContent(), { timeout: 120_000 }).toContain('The sum is 5.');
    const tool = answer.locator('details', { hasText: 'Tool add_numbers' });
    expect(await tool.getAttribute('open')).toBeNull();
    expect(await tool.locator('summary').textContent()).toBe('Tool add_numbers: done');
    await tool.locator('summary').click();
    expect(await tool.textContent()).toContain('"a": 2');
    expect(await tool.textContent()).toMatch(/Result[\s\S]*5/);
    expect(consoleErrors).toEqual([]);
  });

  it('stops an answer: the text shown so far is kept and the composer is ready again', async () => {
    const { page, consoleErrors } = await web.open();
    await send(page, `Talk a while ${STOP}`);
    const answer = answers(page);
    await expect.poll(() => answer.textContent(), { timeout: 120_000 }).toContain('Kept');
    await page.getByRole('button', { name: 'Stop' }).click();
    await idle(page);
    await expect.poll(() => answer.textContent(), { timeout: 120_000 }).toContain('Stopped');
    expect(await answer.textContent()).not.toContain('never sent');
    expect(
      await page
        .getByRole('textbox', { name: 'Message' })
        .evaluate((e) => e === (globalThis as unknown as PageGlobals).document.activeElement),
    ).toBe(true);
    expect(consoleErrors).toEqual([]);
  });

  it('regenerates an answer and switches between the alternatives', async () => {
    const { page, consoleErrors } = await web.open();
    await send(page, `Pick a colour ${COUNT}`);
    const answer = answers(page);
    await expect.poll(() => answer.textContent(), { timeout: 120_000 }).toContain('Answer number 1');
    await idle(page);
    await answer.getByRole('button', { name: 'Regenerate' }).click();
    await expect.poll(() => answer.textContent(), { timeout: 120_000 }).toContain('Answer number 2');
    const alternatives = answer.getByRole('navigation', { name: 'Alternatives' });
    await expect.poll(() => alternatives.textContent(), { timeout: 120_000 }).toContain('2/2');

    await alternatives.getByRole('button', { name: 'Previous alternative' }).click();
    await expect.poll(() => answer.textContent(), { timeout: 120_000 }).toContain('Answer number 1');
    expect(await alternatives.textContent()).toContain('1/2');
    expect(await page.getByRole('article', { name: 'Answer' }).count()).toBe(1);

    await alternatives.getByRole('button', { name: 'Next alternative' }).click();
    await expect.poll(() => answer.textContent(), { timeout: 120_000 }).toContain('Answer number 2');
    expect(consoleErrors).toEqual([]);
  });

  it('edits a message: the conversation branches there and the edit is answered', async () => {
    const { page, consoleErrors } = await web.open();
    await send(page, `First question ${COUNT}`);
    await expect.poll(() => answers(page).textContent(), { timeout: 120_000 }).toContain('to First question');
    await idle(page);

    const question = page.getByRole('article', { name: 'Your message' });
    await question.getByRole('button', { name: 'Edit' }).click();
    const editor = page.getByRole('textbox', { name: 'Edited message' });
    await editor.fill(`Second question ${COUNT}`);
    await page.getByRole('button', { name: 'Save and send' }).click();

    await expect
      .poll(() => answers(page).textContent(), { timeout: 120_000 })
      .toContain('to Second question');
    expect(await page.getByRole('article', { name: 'Your message' }).textContent()).toContain(
      'Second question',
    );
    expect(await page.getByRole('article', { name: 'Your message' }).count()).toBe(1);
    const alternatives = answers(page).getByRole('navigation', { name: 'Alternatives' });
    await expect.poll(() => alternatives.textContent(), { timeout: 120_000 }).toContain('2/2');
    await alternatives.getByRole('button', { name: 'Previous alternative' }).click();
    await expect
      .poll(() => page.getByRole('article', { name: 'Your message' }).textContent(), { timeout: 120_000 })
      .toContain('First question');
    expect(consoleErrors).toEqual([]);
  });

  it('renders hostile model output inert and readable', async () => {
    const { page, consoleErrors } = await web.open();
    await send(page, `Show me something ${HOSTILE}`);
    const answer = answers(page);
    await expect
      .poll(() => answer.textContent(), { timeout: 120_000 })
      .toContain('The end of the hostile answer.');
    await idle(page);

    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).__pwned)).toBeUndefined();
    expect(await answer.locator('img, script, iframe, object, embed').count()).toBe(0);
    expect(await answer.locator('[onerror], [onclick]').count()).toBe(0);
    expect(await answer.textContent()).toContain('after the image.');
    // The javascript: link is no link; the good one opens in a new tab without access to this page.
    expect(await page.locator('a[href^="javascript" i]').count()).toBe(0);
    expect(await answer.getByRole('link', { name: 'bad link' }).count()).toBe(0);
    expect(await answer.textContent()).toContain('bad link');
    const good = answer.getByRole('link', { name: 'good link' });
    expect(await good.getAttribute('href')).toBe('https://example.com/docs');
    expect(await good.getAttribute('target')).toBe('_blank');
    expect((await good.getAttribute('rel'))?.split(' ').sort()).toEqual(['noopener', 'noreferrer']);
    // The huge code block is all there, and scrolls inside a box of bounded height.
    const code = answer.locator('pre').first();
    expect(await code.textContent()).toContain(`const line${HUGE_CODE_LINES - 1} = ${HUGE_CODE_LINES - 1};`);
    const box = await answer
      .locator('[data-streamdown="code-block-body"]')
      .first()
      // The test's tsconfig has no DOM types: the element is described by what is read of it.
      .evaluate((element: ScrollBox) => ({
        height: element.getBoundingClientRect().height,
        scrolls: element.scrollHeight > element.clientHeight,
        lines: element.querySelectorAll('code > span').length,
      }));
    expect(box.lines).toBe(HUGE_CODE_LINES);
    expect(box.scrolls).toBe(true);
    expect(box.height).toBeLessThan(700);
    expect(consoleErrors).toEqual([]);
  });

  it('streams over the UI stream endpoint when a WebSocket cannot open', async () => {
    const { page, consoleErrors } = await web.open();
    await page.addInitScript(() => {
      Reflect.deleteProperty(globalThis, 'WebSocket');
    });
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(new URL(request.url()).pathname);
    });
    await page.reload();
    await send(page, 'Hello without a socket');
    await expect
      .poll(() => answers(page).textContent(), { timeout: 120_000 })
      .toContain('You said: Hello without a socket');
    await idle(page);
    expect(posts).toContain('/api/ui/chat');
    expect(posts).not.toContain('/api/chat');
    expect(consoleErrors).toEqual([]);
  });

  it('shows the problem detail when a message is refused', async () => {
    const { page } = await web.open();
    await send(page, 'x'.repeat(9000));
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent(), { timeout: 120_000 }).toMatch(/8,?000|characters/);
    expect(await answers(page).count()).toBe(0);
  });
});
