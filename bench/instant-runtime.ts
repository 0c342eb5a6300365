// The local runtime the attachment benches measure: in-process, App Service identities, and an offline model that
// answers at once, so the figures are the stores' and the pipeline's, not the model's.
import { createLogHandler } from '../local/log.js';
import { startLocalRuntime, type LocalRuntime } from '../local/runtime.js';

export function startInstantRuntime(): Promise<LocalRuntime> {
  return startLocalRuntime({
    port: 0,
    dataDir: undefined,
    settings: {
      AUTH_MODE: 'app-service',
      OFFLINE_MODEL_TTFT_MS: '0',
      OFFLINE_MODEL_TOKENS_PER_SECOND: '0',
    },
    logHandler: createLogHandler('error'),
  });
}
