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

// --- Content words: what the stand-in rules make tags, topics and themes of -----------------------------------

/** Common words that say nothing about a text's topic. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'the and for are but not you your with this that what which who how why when where was were has have had ' +
    'can could would should will just from about into than then them they their there here its it is be of ' +
    'to in on at by an a or as do does did me my we our us i he she his her so if no yes please tell'
  ).split(' '),
);

/** A text's words: its runs of letters and digits, lower-cased, in order. */
export function lowerWords(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A text's content words: its words of 3+ letters that are not stop words, in order, repeats kept. */
export function contentWords(text: string, stopWords: ReadonlySet<string>): string[] {
  return lowerWords(text).filter((word) => [...word].length >= 3 && !stopWords.has(word));
}

/** The most frequent of the words, at most `count`, ties by first appearance. */
export function mostFrequent(words: readonly string[], count: number): string[] {
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([word]) => word);
}
