// How an answer cites a knowledge-base chunk: the document's title with the page or pages the chunk comes from
// ("Employee Handbook, p. 4", "Employee Handbook, pp. 4–6"), or, for a format without pages, the innermost heading it
// sits under ("Employee Handbook › Leave"); the title alone when there is neither.

export function citationOf(title: string, pages?: readonly number[], heading?: string): string {
  const first = pages?.[0];
  const last = pages?.at(-1);
  if (first !== undefined && last !== undefined)
    return first === last ? `${title}, p. ${first}` : `${title}, pp. ${first}–${last}`;
  if (heading !== undefined && heading.trim() !== '') return `${title} › ${heading.trim()}`;
  return title;
}
