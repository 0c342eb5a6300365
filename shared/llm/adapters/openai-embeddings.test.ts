// Embeddings through the real openai client on recorded and scripted bodies: base64 and float payloads, index
// order, and vectors of the wrong length refused.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  LLM_WIRE_DIR as fixturesDir,
  randomCuts,
  scriptedFetch,
  splitAt,
} from '../../../test/support/llm-wire-replay.js';
import { azureWithKey, openAiCompatible } from '../../../test/support/llm-connections.js';
import { createLlmGateway } from './openai-gateway.js';

const encoder = new TextEncoder();

interface Sidecar {
  expected_embedding?: { dimensions: number; first_4_floats: number[]; count: number };
}

function readSidecar(name: string): Sidecar {
  return JSON.parse(readFileSync(join(fixturesDir, `${name}.json`), 'utf8')) as Sidecar;
}

describe('embeddings', () => {
  it('decodes the recorded base64 body into 3072 float32 values (Azure v1 route)', async () => {
    const sidecar = readSidecar('azure-openai-embeddings');
    const body = new Uint8Array(readFileSync(join(fixturesDir, 'azure-openai-embeddings.body')));
    const { fetch, requests } = scriptedFetch([
      {
        headers: { 'content-type': 'application/json' },
        chunks: splitAt(body, randomCuts(body.length, 3, 512)),
      },
    ]);
    const gateway = createLlmGateway(azureWithKey, { maxRetries: 0, timeoutMs: 5_000, fetch });

    const vectors = await gateway.embed(['The quick brown fox']);

    expect(vectors).toHaveLength(sidecar.expected_embedding!.count);
    expect(vectors[0]).toHaveLength(sidecar.expected_embedding!.dimensions);
    expect(vectors[0]!.slice(0, 4)).toEqual(sidecar.expected_embedding!.first_4_floats);
    // The v1 route: the deployment is the body's model, and neither the path nor an api-version names it.
    expect(requests[0]?.url).toBe('https://example.openai.azure.com/openai/v1/embeddings');
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer test-key');
    expect(requests[0]?.body).toMatchObject({ model: 'embed-dep', encoding_format: 'base64' });
  });

  it('refuses vectors whose length is not the one the vector indexes were created with', async () => {
    const body = new Uint8Array(readFileSync(join(fixturesDir, 'azure-openai-embeddings.body')));
    const respond = () => ({ headers: { 'content-type': 'application/json' }, chunks: [body] });
    const expecting = (embeddingDimensions: number) =>
      createLlmGateway(azureWithKey, {
        maxRetries: 0,
        timeoutMs: 5_000,
        fetch: scriptedFetch([respond()]).fetch,
        embeddingDimensions,
      });
    await expect(expecting(1536).embed(['The quick brown fox'])).rejects.toThrow(
      /returned embeddings of 3072 dimensions .*LLM_EMBEDDING_DIMENSIONS is 1536/,
    );
    expect(await expecting(3072).embed(['The quick brown fox'])).toHaveLength(1);
  });

  it('also accepts float arrays from servers that ignore encoding_format, in index order', async () => {
    const body = JSON.stringify({
      object: 'list',
      data: [
        { object: 'embedding', index: 1, embedding: [0.5, 0.25] },
        { object: 'embedding', index: 0, embedding: [1, 0] },
      ],
    });
    const { fetch } = scriptedFetch([{ chunks: [encoder.encode(body)] }]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    expect(await gateway.embed(['a', 'b'])).toEqual([
      [1, 0],
      [0.5, 0.25],
    ]);
    expect(await gateway.embed([])).toEqual([]);
  });
});
