// Token estimation, one rule for every area that budgets text by tokens: prompt building, working memory's
// window, history's digest checkpoints and knowledge chunking. Pure.

/** What the API adds around each message (role, separators), in tokens. */
const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * A conservative token estimate: one token per 3 UTF-8 bytes, rounded up. Real counts depend on the model's
 * tokenizer, so no exact count is possible here; the estimate is meant never to fall short. It over-counts
 * English (about 4 characters, i.e. 4 bytes, per token) and still fits CJK text, where a character takes 3
 * bytes and usually about one token.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 3);
}

/** A message's size in the prompt: its text's estimate and what the API adds around it. */
export function messageTokens(message: { content: string }): number {
  return estimateTokens(message.content) + MESSAGE_OVERHEAD_TOKENS;
}
