// The AI SDK's @ai-sdk/openai-compatible provider (2.0.x, a client nobody here wrote) against /api/v1 on the local
// runtime: streamText reads a turn's answer, its finish reason and its usage from the Chat Completions stream.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText } from 'ai';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { DEV_IDENTITY_HEADER } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';

describe('the OpenAI-compatible API, read by the AI SDK', () => {
  let runtime: LocalRuntime;
  let model: ScriptedModel;

  beforeAll(async () => {
    model = await startScriptedModel((request) => ({
      reasoning: 'Thinking it over.',
      content: `Echo: ${request.messages.findLast((message) => message.role === 'user')?.content ?? ''}`,
    }));
    runtime = await startTestRuntime({ settings: model.settings });
  }, 60_000);

  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  }, 60_000);

  it('streams a turn through streamText, with its reasoning, finish reason and usage', async () => {
    const provider = createOpenAICompatible({
      name: 'chat-backend',
      baseURL: `${runtime.url}/api/v1`,
      headers: { [DEV_IDENTITY_HEADER]: 'user_001' },
      includeUsage: true,
    });
    const question = `Hello there ${randomUUID()}`;
    const result = streamText({
      model: provider.chatModel(runtime.app.config.models.defaultModel),
      system: 'Be brief.',
      prompt: question,
      maxRetries: 0,
    });
    const parts: string[] = [];
    for await (const part of result.fullStream) parts.push(part.type);
    expect(await result.text).toBe(`Echo: ${question}`);
    expect(await result.reasoningText).toBe('Thinking it over.');
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
    expect(parts).not.toContain('error');
    // The system message reached the model as given, after the turn's own prompt.
    const sent = model.requests.find((request) => request.messages.at(-1)?.content === question);
    expect(sent?.messages.at(-2)).toEqual({ role: 'system', content: 'Be brief.' });
  }, 30_000);
});
