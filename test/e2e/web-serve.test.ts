// The local runtime serves a built client at `/` to the run's shared Chromium: its module script runs and calls the
// API on the same origin, an inline script is refused by the CSP, and a client route loads the same page.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { describeBrowser, useWebRuntime } from '../support/browser.js';

/** A stand-in for dist/web: a page whose hashed module script starts a session as the dev user and shows the status. */
function fixtureClient(): string {
  const root = mkdtempSync(join(tmpdir(), 'web-serve-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(
    join(root, 'index.html'),
    '<!doctype html><html lang="en"><title>fixture</title>' +
      '<script type="module" src="./assets/index-Ab12_x9Z.js"></script>' +
      '<script>document.title = "inline ran"</script><main><p id="out">loading</p></main></html>',
  );
  writeFileSync(
    join(root, 'assets', 'index-Ab12_x9Z.js'),
    `const headers = { 'x-ms-client-principal-id': new URLSearchParams(location.search).get('user') };
     const response = await fetch('/api/session/start', { method: 'POST', headers });
     document.getElementById('out').textContent = 'session ' + response.status + ' at ' + location.pathname;`,
  );
  return root;
}

describeBrowser('the built client served at /', () => {
  const web = useWebRuntime({ webRoot: fixtureClient() });

  it('runs its module script, which reaches the API on the same origin, and refuses inline script', async () => {
    const { page, consoleErrors } = await web.open({ userId: 'user_002' });
    await expect
      .poll(() => page.locator('#out').textContent(), { timeout: 120_000 })
      .toBe('session 201 at /');
    expect(await page.title()).toBe('fixture');
    // Chromium reports the refused inline script on the console: that is the CSP at work.
    expect(consoleErrors.join('\n')).toMatch(/Content Security Policy/);
  });

  it('answers a client route with the same page', async () => {
    const { page } = await web.open({ path: '/conversations/abc' });
    await expect
      .poll(() => page.locator('#out').textContent(), { timeout: 120_000 })
      .toBe('session 201 at /conversations/abc');
  });
});

describeBrowser('the real web client served at /', () => {
  // The client built from web/ (rebuilt first if its sources changed): the CSP must let all of it run.
  const web = useWebRuntime();

  it('loads at / with no console error: nothing it needs is refused by the CSP', async () => {
    const { page, consoleErrors } = await web.open({ userId: 'user_001' });
    await expect(page.getByRole('heading', { level: 1 }).textContent({ timeout: 120_000 })).resolves.not.toBe(
      '',
    );
    await expect(page.getByRole('main').count()).resolves.toBe(1);
    expect(consoleErrors).toEqual([]);
  });
});
