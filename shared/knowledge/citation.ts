// How an answer cites a knowledge-base chunk: the document's title with the page or pages the chunk comes
// from ("Employee Handbook, p. 4", "Employee Handbook, pp. 4–6"), or, for a format without pages, the
// innermost heading it sits under ("Employee Handbook › Leave"); the title alone when there is neither.

/** The longest citation: a title (at most 200 characters) and a heading (at most 200), cut to fit. */
export const MAX_CITATION_CHARS = 300;

export function citationOf(title: string, pages?: readonly number[], heading?: string): string {
  const first = pages?.[0];
  const last = pages?.at(-1);
  if (first !== undefined && last !== undefined)
    return shortened(
      first === last ? `${title}, p. ${first}` : `${title}, pp. ${first}–${last}`,
      MAX_CITATION_CHARS,
    );
  if (heading !== undefined && heading.trim() !== '')
    return shortened(`${title} › ${heading.trim()}`, MAX_CITATION_CHARS);
  return shortened(title, MAX_CITATION_CHARS);
}

/**
 * The text cut to at most `maxChars` characters (the ellipsis included) at a word when one ends in its last fifth;
 * counted in code points, so no character is split. A text that fits is given back as it is.
 */
export function shortened(text: string, maxChars: number): string {
  const chars = [...text];
  if (chars.length <= maxChars) return text;
  const start = chars.slice(0, maxChars - 1).join('');
  // The kept part ends at a word when the next character is a space; else it goes back to the last space.
  if (/\s/.test(chars[maxChars - 1] ?? '')) return `${start.trimEnd()}…`;
  const space = start.search(/\s\S*$/);
  const cut =
    space >= 0 && [...start.slice(0, space)].length >= (maxChars * 4) / 5 ? start.slice(0, space) : start;
  return `${cut.trimEnd()}…`;
}
