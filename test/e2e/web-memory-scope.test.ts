// The memory panel's scopes in real Chromium against the local runtime and its offline model: a fact learned in a
// project shows that it lives there, and the select moves it into the shared memory.
import { expect, it } from 'vitest';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import { settle } from '../support/local-runtime.js';

const UI_TIMEOUT = 30_000;

describeBrowser('the memory panel’s scopes', () => {
  const web = useWebRuntime();

  it('shows the project a fact was learned in and moves it to the shared memory', async () => {
    const client = new ChatClient(web.url, 'user_001');
    const json = { 'content-type': 'application/json' };
    const { projectId } = await expectStatus<{ projectId: string }>(
      await fetch(`${web.url}/api/projects`, {
        method: 'POST',
        headers: client.headers(json),
        body: JSON.stringify({ name: 'Boats' }),
      }),
      201,
    );
    const { sessionId } = await expectStatus<{ sessionId: string }>(
      await fetch(`${web.url}/api/session/start`, {
        method: 'POST',
        headers: client.headers(json),
        body: JSON.stringify({ projectId }),
      }),
      201,
    );
    const chatMessageId = await client.send(sessionId, 'I love sailing.');
    await client.stream(sessionId, chatMessageId, { timeoutMs: 60_000 });
    await settle(web.runtime);

    const { page, consoleErrors } = await web.open({ userId: 'user_001' });
    const panels = page.getByRole('complementary', { name: 'Memory and knowledge' });
    const where = panels.getByRole('combobox', { name: 'Where "The user loves sailing." lives' });
    await expect.poll(() => where.count(), { timeout: UI_TIMEOUT }).toBe(1);
    await expect.poll(() => where.inputValue(), { timeout: UI_TIMEOUT }).toBe(`project:${projectId}`);
    expect(await where.locator('option:checked').textContent()).toBe('Project: Boats');

    await where.selectOption('user');
    const scopeOf = async () => {
      const page = await expectStatus<{ facts: { statement: string; scope: string }[] }>(
        await fetch(`${web.url}/api/memory/users/user_001/memories?status=active`, {
          headers: client.headers(),
        }),
        200,
      );
      return page.facts.find((fact) => fact.statement === 'The user loves sailing.')?.scope;
    };
    await expect.poll(scopeOf, { timeout: UI_TIMEOUT }).toBe('user');
    await expect.poll(() => where.inputValue(), { timeout: UI_TIMEOUT }).toBe('user');
    expect(consoleErrors).toEqual([]);
  }, 180_000);
});
