// The benchmark's model: the offline model on its own HTTP server in its own process, as a remote LLM would be,
// so its work is counted neither in the runtime's CPU time nor in the clients'. With `firstTokenSeed`, each
// request's first token waits a model.first-token draw, and the bench reads back each turn's own draw.
import { z } from 'zod';
import { createAzureLatencyModel } from '../local/latency/azure-latency.js';
import { productVocabulary } from '../local/offline-model-vocabulary.js';
import { startOfflineModelServer } from '../local/offline-model/offline-model-server.js';
import { messageText, type ChatCompletionRequest } from '../local/offline-model/request-schema.js';
import { OFFLINE_MODEL_PATH } from '../local/runtime.js';
import { childOptions, serveCommands } from './child-process.js';

const optionsSchema = z.object({
  ttftMs: z.number(),
  tokensPerSecond: z.number(),
  embeddingDimensions: z.number(),
  firstTokenSeed: z.number().int().optional(),
});

export interface ModelReady {
  baseUrl: string;
}

/** A turn's text carries this marker, so the model can tell which turn a request streams for. */
export function benchRef(id: string): string {
  return `(bench-ref:${id})`;
}

/** The marker of the latest user message that carries one. */
function refOf(request: ChatCompletionRequest): string | undefined {
  for (const message of [...request.messages].reverse()) {
    if (message.role !== 'user') continue;
    const ref = /\(bench-ref:([\w-]+)\)/.exec(messageText(message))?.[1];
    if (ref !== undefined) return ref;
  }
  return undefined;
}

serveCommands(async () => {
  const { firstTokenSeed, ...options } = optionsSchema.parse(childOptions());
  /** Each marked turn's first streamed request's first-token wait (later calls for the turn are not its TTFT). */
  const draws = new Map<string, number>();
  const latency =
    firstTokenSeed === undefined
      ? undefined
      : createAzureLatencyModel({
          seed: firstTokenSeed,
          taskHub: 'azure-storage',
          maxQueuePollingIntervalMs: 0,
        });
  const server = await startOfflineModelServer({
    pathPrefix: OFFLINE_MODEL_PATH,
    // The product's formats and tool names, as the runtime hands them to its own offline model.
    vocabulary: productVocabulary,
    ...options,
    ...(latency === undefined
      ? {}
      : {
          firstTokenMs: (request: ChatCompletionRequest) => {
            const ms = latency.draw('model.first-token');
            const ref = refOf(request);
            if (ref !== undefined && request.stream === true && !draws.has(ref)) draws.set(ref, ms);
            return ms;
          },
        }),
  });
  const ready: ModelReady = { baseUrl: server.baseUrl };
  return {
    ready,
    handlers: {
      /** The first-token waits drawn for these turns (null where none was), forgotten once read. */
      firstTokenDraws: (refs: unknown) =>
        z
          .array(z.string())
          .parse(refs)
          .map((ref) => {
            const ms = draws.get(ref) ?? null;
            draws.delete(ref);
            return ms;
          }),
      stop: async () => {
        await server.close();
        process.exit(0);
      },
    },
  };
});
