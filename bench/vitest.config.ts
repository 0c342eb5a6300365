// The benchmark's own unit tests (its clients and arithmetic), run by `npm run bench:test`.
import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { include: ['bench/**/*.test.ts'] } });
