// Full-text matching in process where Cosmos DB's full-text search is missing (the local server): does a text
// hold every word of a query, answered close to how Cosmos DB's en-US full-text search answers it.

/** Where a store answers full-text questions: Cosmos DB's own functions (Azure), or this module (local server). */
export type FullTextMode = 'cosmos' | 'in-process';

// The question words and pronouns of a search ("how do I", "what does my") say nothing about what is looked for.
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about am an and are as at be been but by can could did do does for from had has have how i if in ' +
    'into is it its me my no not of on or our please should so such tell that the their then there these ' +
    'they this to us was we were what when where which who whom why will with would you your'
  ).split(' '),
);

/** A stem is never cut shorter than this ("uses" → "use", never "us"). */
const MIN_STEM = 3;
const VOWELS = /[aeiouy]/;

/** The words of a text, lower-cased, in order (repeats kept). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Whether a lower-cased word is a stop word: one a search ignores. */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** The words of a query that count: its words without stop words, without repeats. */
export function queryWords(q: string): string[] {
  return [...new Set(words(q).filter((word) => !STOP_WORDS.has(word)))];
}

/** The stem of a lower-cased word: a prefix of it (see the module comment). */
export function stem(word: string): string {
  if (word.length <= MIN_STEM || !/^\p{L}+$/u.test(word)) return word;
  let stemmed = word;
  /** Cuts `suffix` when what remains is still a stem (long enough, with a vowel). */
  const cut = (suffix: string): boolean => {
    if (!stemmed.endsWith(suffix)) return false;
    const next = stemmed.slice(0, stemmed.length - suffix.length);
    if (next.length < MIN_STEM || !VOWELS.test(next)) return false;
    stemmed = next;
    return true;
  };
  // Plurals and the third person: studies, boxes, watches, classes, days (but not this, status, analysis).
  if (!cut('ies')) {
    if (/(ss|x|ch|sh|z)es$/.test(stemmed)) cut('es');
    else if (/[^siu]s$/.test(stemmed)) cut('s');
  }
  // The past and the progressive: created, running.
  if (!cut('ed')) cut('ing');
  // What the endings leave, so the bare word meets its forms: stopp → stop, create → creat (as created),
  // study → stud (as studies).
  if (/([^aeiouylsz])\1$/.test(stemmed)) cut(stemmed.slice(-1));
  else if (/[^aeiou]y$/.test(stemmed)) cut('y');
  else cut('e');
  return stemmed;
}

/** The stems a query needs, each once; empty when the query has no word that counts. */
export function queryStems(q: string): string[] {
  return [...new Set(queryWords(q).map(stem))];
}

/**
 * Whether `text` holds every word of `q` (by stem); false when `q` has no word that counts, as a search for
 * nothing finds nothing.
 */
export function fullTextMatches(text: string, q: string): boolean {
  const wanted = queryStems(q);
  if (wanted.length === 0) return false;
  const have = new Set(words(text).map(stem));
  return wanted.every((word) => have.has(word));
}

/**
 * Whether an exchange's index entry is about `topic` (SessionMemory.findExchanges): a tag equal to it, ignoring
 * case, or every word of it in the line.
 */
export function exchangeIsAbout(entry: { line: string; tags: readonly string[] }, topic: string): boolean {
  const wanted = topic.trim().toLowerCase();
  return entry.tags.some((tag) => tag.toLowerCase() === wanted) || fullTextMatches(entry.line, topic);
}
