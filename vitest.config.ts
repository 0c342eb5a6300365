// Three projects `npm test` runs: colocated unit tests, contract tests of adapters against the local services, and
// end-to-end tests that drive the running local runtime; a fourth, outside it (`npm run test:conformance`), runs
// the official MCP conformance suite, which installs its own Node 22.
import { defineConfig } from 'vitest/config';

// No test may fail because the machine is busy: each project's limits are many times what its slowest test takes
// on a quiet machine (a PDF read in a worker takes about 4 s there, and ten times that on 2 cores shared with other
// work). They only stop a test that hangs; tests assert outcomes, never how long something took.
export default defineConfig({
  test: {
    // Vitest's default is one worker fewer than the cores, which is a single worker on a 2-core CI machine. Most
    // test time is spent waiting (workers, child processes, loopback servers), so two workers overlap that waiting.
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'shared/**/*.test.ts',
            'local/**/*.test.ts',
            'functions/**/*.test.ts',
            'bench/**/*.test.ts',
            'web/src/**/*.test.ts',
          ],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'contract',
          include: ['test/contract/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 240_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          // One Chromium for every browser test file, launched (and the web client built) on first use.
          globalSetup: ['test/support/browser-broker.ts'],
          testTimeout: 240_000,
          hookTimeout: 480_000,
        },
      },
      {
        test: {
          name: 'conformance',
          include: ['test/conformance/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
