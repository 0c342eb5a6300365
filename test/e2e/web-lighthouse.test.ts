// Lighthouse (its default mobile run: a phone-sized screen, simulated slow network and CPU) on the page the local
// runtime serves: accessibility and best practices at 95 or more; performance is reported, not asserted (two
// shared cores make it noisy).
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import { expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, describeBrowser, useWebRuntime } from '../support/browser.js';

const MIN_SCORE = 0.95;

describeBrowser('Lighthouse on the web client', () => {
  const web = useWebRuntime();

  it('scores at least 95 for accessibility and best practices at phone size', async () => {
    const chrome = await chromeLauncher.launch({
      chromePath: CHROMIUM,
      chromeFlags: CHROMIUM_ARGS,
      logLevel: 'silent',
    });
    try {
      const result = await lighthouse(`${web.url}/?user=user_001`, {
        port: chrome.port,
        output: 'json',
        logLevel: 'error',
        onlyCategories: ['performance', 'accessibility', 'best-practices'],
      });
      const categories = result?.lhr.categories ?? {};
      const score = (id: string) => categories[id]?.score ?? 0;
      const failing = Object.values(result?.lhr.audits ?? {})
        .filter((audit) => audit.scoreDisplayMode === 'binary' && audit.score === 0)
        .map((audit) => audit.id);
      const audits = result?.lhr.audits ?? {};
      const metrics = [
        'first-contentful-paint',
        'largest-contentful-paint',
        'total-blocking-time',
        'speed-index',
      ]
        .map((id) => `${id} ${audits[id]?.displayValue ?? '?'}`)
        .join(', ');
      // Reported for the record, with the metrics behind performance; the README quotes it.
      process.stdout.write(`Lighthouse (mobile) metrics: ${metrics}\n`);
      process.stdout.write(
        `Lighthouse (mobile): performance ${Math.round(score('performance') * 100)}, accessibility ${Math.round(
          score('accessibility') * 100,
        )}, best practices ${Math.round(score('best-practices') * 100)}; failing audits: ${failing.join(', ') || 'none'}\n`,
      );
      expect(score('accessibility'), `failing audits: ${failing.join(', ')}`).toBeGreaterThanOrEqual(
        MIN_SCORE,
      );
      expect(score('best-practices'), `failing audits: ${failing.join(', ')}`).toBeGreaterThanOrEqual(
        MIN_SCORE,
      );
    } finally {
      chrome.kill();
    }
  }, 180_000);
});
