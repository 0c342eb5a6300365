// Starts the local runtime in-process for tests: a free loopback port, the offline model at full speed,
// logs kept quiet unless a test fails loudly.
import type { FunctionDefinition } from '../../functions/definition.js';
import { createLogHandler } from '../../local/log.js';
import { startLocalRuntime, type LocalRuntime } from '../../local/runtime.js';

export interface TestRuntimeOptions {
  dataDir?: string;
  settings?: Record<string, string | undefined>;
  functions?: readonly FunctionDefinition[];
}

export function startTestRuntime(options: TestRuntimeOptions = {}): Promise<LocalRuntime> {
  return startLocalRuntime({
    port: 0,
    dataDir: options.dataDir,
    settings: { OFFLINE_MODEL_TTFT_MS: '0', OFFLINE_MODEL_TOKENS_PER_SECOND: '0', ...options.settings },
    logHandler: createLogHandler('error'),
    serviceBus: { redeliveryDelayMs: 5 },
    functions: options.functions,
  });
}
