// readUsage under either API's field names: counts, details, the top-level reasoning fallback, and absent values.
import { describe, expect, it } from 'vitest';
import { readUsage, type UsageFields } from './wire-reading.js';

const chatFields: UsageFields = {
  input: 'prompt_tokens',
  output: 'completion_tokens',
  inputDetails: 'prompt_tokens_details',
  outputDetails: 'completion_tokens_details',
  reasoningFallback: 'reasoning_tokens',
};
const responsesFields: UsageFields = {
  input: 'input_tokens',
  output: 'output_tokens',
  inputDetails: 'input_tokens_details',
  outputDetails: 'output_tokens_details',
};

describe('readUsage', () => {
  it('reads counts and details under the given field names', () => {
    expect(
      readUsage(
        {
          input_tokens: 10,
          output_tokens: 4,
          total_tokens: 14,
          input_tokens_details: { cached_tokens: 6 },
          output_tokens_details: { reasoning_tokens: 2 },
        },
        responsesFields,
      ),
    ).toEqual({
      promptTokens: 10,
      completionTokens: 4,
      totalTokens: 14,
      cachedPromptTokens: 6,
      reasoningTokens: 2,
    });
  });

  it('takes top-level reasoning tokens only where the API has that fallback', () => {
    const usage = { prompt_tokens: 3, completion_tokens: 5, reasoning_tokens: 4, input_tokens: 3 };
    expect(readUsage(usage, chatFields)?.reasoningTokens).toBe(4);
    expect(readUsage(usage, responsesFields)).toEqual({
      promptTokens: 3,
      completionTokens: 0,
      totalTokens: 3,
    });
  });

  it('sums a missing total, and reads null or a non-object as no usage', () => {
    expect(readUsage({ prompt_tokens: 2, completion_tokens: null }, chatFields)).toEqual({
      promptTokens: 2,
      completionTokens: 0,
      totalTokens: 2,
    });
    expect(readUsage(null, chatFields)).toBeUndefined();
    expect(readUsage([1, 2], chatFields)).toBeUndefined();
  });
});
