// Starts the local runtime in-process for tests: a free loopback port, the offline model at full speed,
// and only critical logs (tests provoke failures on purpose); TEST_LOG_LEVEL=information shows more.
import type { LogHandler, LogLevel } from '@azure/functions';
import type { FunctionDefinition } from '../../functions/definition.js';
import { createLogHandler } from '../../local/log.js';
import { startLocalRuntime, type LocalRuntime } from '../../local/runtime.js';

export interface TestRuntimeOptions {
  dataDir?: string;
  settings?: Record<string, string | undefined>;
  functions?: readonly FunctionDefinition[];
  /** Receives every log line at every level (the console still gets the critical ones). */
  capture?: LogHandler;
}

export function startTestRuntime(options: TestRuntimeOptions = {}): Promise<LocalRuntime> {
  return startLocalRuntime({
    port: 0,
    dataDir: options.dataDir,
    settings: {
      OFFLINE_MODEL_TTFT_MS: '0',
      OFFLINE_MODEL_TOKENS_PER_SECOND: '0',
      // The Cosmos DB server on the test's own thread starts a second sooner; the compiled runtimes of the crash and
      // start-up tests, and test/contract/cosmos-thread.test.ts, keep it on its worker thread.
      LOCAL_COSMOS_THREAD: 'caller',
      // LOCAL_AZURE_LATENCY=azure in the environment runs any test under the Azure latency model,
      // CHAT_FIRST_ROUND=orchestration on the turn's older path, and HOT_STORE=redis with REDIS_URL on Redis.
      ...pick(process.env, [
        'LOCAL_COSMOS_THREAD',
        'LOCAL_AZURE_LATENCY',
        'LOCAL_AZURE_LATENCY_SEED',
        'LOCAL_AZURE_TASK_HUB',
        'CHAT_FIRST_ROUND',
        'HOT_STORE',
        'REDIS_URL',
      ]),
      ...options.settings,
    },
    logHandler: withCapture(
      createLogHandler((process.env.TEST_LOG_LEVEL as LogLevel | undefined) ?? 'critical'),
      options.capture,
    ),
    serviceBus: { redeliveryDelayMs: 5 },
    ...(options.functions === undefined ? {} : { functions: options.functions }),
  });
}

function withCapture(console: LogHandler, capture: LogHandler | undefined): LogHandler {
  if (capture === undefined) return console;
  return (level, ...args) => {
    capture(level, ...args);
    console(level, ...args);
  };
}

function pick(env: NodeJS.ProcessEnv, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
}

// Three rounds, not one: a worker's output can start another worker after its queue looked idle.
export async function settle(runtime: LocalRuntime): Promise<void> {
  for (let round = 0; round < 3; round += 1) {
    await runtime.serviceBus.idle();
    await runtime.durable.idle();
  }
}
