// axe-core on each main view of the web client (chat, conversations, memory, knowledge, a confirmation, settings)
// at desktop and phone width, light and dark: no serious or critical violation. axe is injected into the page.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import { seedViews, VIEW_SETTINGS, walkViews } from '../support/web-views.js';

const AXE = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url));

const LAYOUTS = [
  { name: 'desktop', viewport: { width: 1280, height: 800 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;
const SCHEMES = ['light', 'dark'] as const;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/** The serious and critical violations axe finds in the page as it is now, each as one readable line. */
async function seriousViolations(page: Page, view: string): Promise<string[]> {
  const loaded = await page.evaluate("typeof axe !== 'undefined'");
  // The page's CSP refuses inline script (addScriptTag's way in), so axe's source is evaluated through the
  // DevTools protocol instead, which the CSP does not govern.
  if (loaded !== true) await page.evaluate(readFileSync(AXE, 'utf8'));
  const violations = await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations)",
  );
  return (violations as AxeViolation[])
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${view}: ${violation.id} (${violation.impact}) ${violation.help} at ${violation.nodes
          .map((node) => JSON.stringify(node.target))
          .join(', ')}`,
    );
}

describeBrowser('accessibility of the web client', () => {
  const web = useWebRuntime({ settings: VIEW_SETTINGS });

  it('has no serious or critical axe violation on any main view, at desktop and phone width, light and dark', async () => {
    // Something in every view: a conversation, a fact and its summary, a document, an MCP server.
    await seedViews(web, 'user_002', 'I love sailing.');

    const found: string[] = [];
    for (const layout of LAYOUTS) {
      for (const scheme of SCHEMES) {
        const label = `${layout.name}, ${scheme}`;
        const opened = await web.open({
          userId: 'user_002',
          viewport: layout.viewport,
          colorScheme: scheme,
        });
        const page = opened.page;
        expect(await page.evaluate('document.documentElement.dataset.theme')).toBe(scheme);
        // On a phone the conversations and the panels are drawers, opened from the header.
        await walkViews(
          page,
          { drawers: layout.name === 'phone', conversation: /^I love sailing/ },
          async (view) => {
            found.push(...(await seriousViolations(page, `${label}, ${view}`)));
          },
        );
        await opened.close();
      }
    }
    expect(found).toEqual([]);
  }, 240_000);
});
