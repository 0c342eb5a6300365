// Splits text into the offline model's "tokens": pieces whose concatenation is exactly the text, so a
// client that joins the streamed deltas gets the very string the non-streamed answer holds.

/** Word-sized tokens: leading whitespace stays with the word or punctuation mark that follows it. */
export function splitWords(text: string): string[] {
  return text.match(/\s*(?:[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_])|\s+$/gu) ?? [];
}

/** Fragments of JSON text the way OpenAI cuts tool-call arguments: punctuation runs and words apart. */
export function splitJsonFragments(json: string): string[] {
  return json.match(/\s*(?:[\p{L}\p{N}_.+-]+|[^\s\p{L}\p{N}_.+-]+)|\s+$/gu) ?? [];
}

export function countTokens(text: string): number {
  return splitWords(text).length;
}
