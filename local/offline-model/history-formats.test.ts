// The offline model's stand-in answers to the history worker's formats pass the product's own validation: the real
// gateway calls the offline model over HTTP, as the local runtime does, and the history calls accept the answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldSummary, indexExchange } from '../../shared/history/history-llm.js';
import { createLlmGateway } from '../../shared/llm/adapters/openai-gateway.js';
import type { LlmGateway } from '../../shared/llm/llm-gateway.js';
import { productVocabulary } from '../offline-model-vocabulary.js';
import { startOfflineModelServer } from './offline-model-server.js';

let server: Awaited<ReturnType<typeof startOfflineModelServer>>;
let gateway: LlmGateway;

beforeAll(async () => {
  server = await startOfflineModelServer({ pathPrefix: '/offline-model/v1', vocabulary: productVocabulary });
  gateway = createLlmGateway(
    { kind: 'openai-compatible', baseUrl: server.baseUrl, chatModel: 'offline', embeddingModel: 'offline' },
    { maxRetries: 0, timeoutMs: 5_000 },
  );
});
afterAll(() => server.close());

describe('the history formats on the offline model', () => {
  it('index an exchange, with the title when asked', async () => {
    const exchange = {
      question: 'Which museums in Rome open on Mondays?',
      answer:
        'This is the offline stand-in model, not a real LLM. You said: "Which museums in Rome open on Mondays?"',
    };
    expect(await indexExchange(gateway, exchange)).toEqual({
      line: `Q: ${exchange.question} → A: This is the offline stand-in model, not a real LLM. You said: "Which museums in Rome open on Monday…`,
      tags: ['museums', 'rome', 'open'],
    });
    expect(
      await indexExchange(gateway, exchange, { firstQuestion: 'Plan a long weekend in Rome for two' }),
    ).toMatchObject({ title: 'Plan a long weekend in Rome for two' });
  });

  it('fold questions into the summary', async () => {
    const summary = await foldSummary(gateway, 'Asked about Rome.', [
      { question: 'Museums on Mondays?', answer: 'a' },
      { question: 'Trains to Florence?', answer: '', failed: true },
    ]);
    expect(summary).toBe('Asked about Rome.; Museums on Mondays?; Trains to Florence?');
  });
});
