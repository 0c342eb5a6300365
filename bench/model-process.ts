// The benchmark's model: the offline model on its own HTTP server in its own process, as a remote LLM would be,
// so its work is counted neither in the runtime's CPU time nor in the clients'.
import { z } from 'zod';
import { startOfflineModelServer } from '../local/offline-model/offline-model-server.js';
import { OFFLINE_MODEL_PATH } from '../local/runtime.js';
import { childOptions, serveCommands } from './child-process.js';

const optionsSchema = z.object({
  ttftMs: z.number(),
  tokensPerSecond: z.number(),
  embeddingDimensions: z.number(),
});

export interface ModelReady {
  baseUrl: string;
}

serveCommands(async () => {
  const options = optionsSchema.parse(childOptions());
  const server = await startOfflineModelServer({ pathPrefix: OFFLINE_MODEL_PATH, ...options });
  const ready: ModelReady = { baseUrl: server.baseUrl };
  return {
    ready,
    handlers: {
      stop: async () => {
        await server.close();
        process.exit(0);
      },
    },
  };
});
