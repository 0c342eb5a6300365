// Shortening text for what the product writes itself (prompts, index lines, previews, logs): on one line, and cut
// to a length in characters (never half a surrogate pair), marked with an ellipsis where it was cut.

/** The text on one line: every run of whitespace (line breaks included) as one space, trimmed. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The text as is when it has at most `limit` characters; else its first `limit - 1` and "…". */
export function cut(text: string, limit: number): string {
  const chars = [...text];
  return chars.length <= limit ? text : `${chars.slice(0, limit - 1).join('')}…`;
}
