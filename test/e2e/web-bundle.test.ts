// The web client's weight on first load: the entry script and what it imports statically (the page's
// modulepreload links) stay within 200 kB gzipped, and the Markdown renderer is not among them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { builtWebClient } from '../support/browser.js';

const BUDGET_GZIP_BYTES = 200_000;

/** The scripts index.html loads before anything runs: its module script and the chunks it preloads. */
function firstLoadScripts(root: string): string[] {
  const html = readFileSync(join(root, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script[^>]+type="module"[^>]+src="([^"]+)"/g)].map(
    (match) => match[1]!,
  );
  const preloads = [...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g)].map(
    (match) => match[1]!,
  );
  return [...scripts, ...preloads];
}

describe('the web client on first load', () => {
  it('loads at most 200 kB of gzipped script, without the Markdown renderer', async () => {
    const root = await builtWebClient();
    const scripts = firstLoadScripts(root);
    expect(scripts.length).toBeGreaterThan(0);
    let gzipped = 0;
    for (const script of scripts) {
      const code = readFileSync(join(root, script));
      gzipped += gzipSync(code).length;
      // streamdown marks what it renders with data-streamdown: its code is loaded with the first answer.
      expect(code.toString('utf8'), script).not.toContain('data-streamdown');
    }
    expect(gzipped).toBeLessThanOrEqual(BUDGET_GZIP_BYTES);
  }, 120_000);
});
