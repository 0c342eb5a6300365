// Embeddings through `/embeddings` (whatever API chat turns use), in batches every provider accepts, each vector
// checked against the length the vector indexes were created with.
import { decodeEmbedding } from '../embedding-decoding.js';
import { LlmError, type EmbedOptions } from '../llm-gateway.js';
import { callEndpoint, notOpenAiShaped, type OpenAiEndpoint } from './openai-endpoint.js';

/** Stays well under every provider's per-request input limit (OpenAI: 2048). */
const EMBEDDING_BATCH_SIZE = 256;

export async function embed(
  endpoint: OpenAiEndpoint,
  texts: string[],
  options?: EmbedOptions,
): Promise<number[][]> {
  const model = endpoint.embeddingModel;
  const vectors: number[][] = [];
  for (let start = 0; start < texts.length; start += EMBEDDING_BATCH_SIZE) {
    const batch = texts.slice(start, start + EMBEDDING_BATCH_SIZE);
    // Asking for base64 explicitly makes the SDK hand the payload over untouched; decodeEmbedding then
    // also copes with servers that ignore encoding_format and send floats.
    const response = await callEndpoint(endpoint, model, () =>
      endpoint.client.embeddings.create({ model, input: batch, encoding_format: 'base64' }),
    );
    if (!Array.isArray((response as Partial<typeof response>).data))
      throw notOpenAiShaped(endpoint, 'embeddings list');
    // Reported whatever follows: the request was billed even if its vectors are refused below.
    if (options?.onUsage && typeof response.usage?.prompt_tokens === 'number')
      options.onUsage({
        usage: {
          promptTokens: response.usage.prompt_tokens,
          completionTokens: 0,
          totalTokens: response.usage.total_tokens,
        },
        ...(typeof response.model === 'string' && response.model !== '' ? { model: response.model } : {}),
      });
    const data = [...response.data].sort((a, b) => a.index - b.index);
    if (data.length !== batch.length) {
      throw new LlmError(`${endpoint.name} returned ${data.length} embeddings for ${batch.length} texts.`, {
        retryable: true,
      });
    }
    for (const item of data) {
      const vector = decodeEmbedding(item.embedding);
      const expected = endpoint.options.embeddingDimensions;
      if (expected !== undefined && vector.length !== expected)
        throw new LlmError(
          `${endpoint.name} returned embeddings of ${vector.length} dimensions from "${model}"; ` +
            `LLM_EMBEDDING_DIMENSIONS is ${expected}, the length the vector indexes were created with. Use a ` +
            'model (or a dimensions setting of it) that produces that length.',
          { retryable: false },
        );
      vectors.push(vector);
    }
  }
  return vectors;
}
