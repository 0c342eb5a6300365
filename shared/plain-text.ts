// Plain text the product shows or writes itself: shortening (prompts, index lines, previews, logs) on one line and
// cut to a length without splitting a surrogate pair, and the rules for text shown in user interfaces (titles, file
// names): what refuses an explicit title, and the cleaning of names and lines that came from elsewhere.
import { z } from 'zod';

/** The text on one line: every run of whitespace (line breaks included) as one space, trimmed. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The text as is when it has at most `limit` characters; else its first `limit - 1` and "…". */
export function cut(text: string, limit: number): string {
  const chars = [...text];
  return chars.length <= limit ? text : `${chars.slice(0, limit - 1).join('')}…`;
}

// --- Text shown in user interfaces (titles, file names) ------------------------------------------------------

// Control characters (C0, DEL, C1), which terminals and logs act on; UTF-16 halves without their pair, which
// cannot be encoded and break clients; and bidirectional embeddings, overrides and isolates, which reorder what
// is shown after them ("U+202E" makes "evil\u202Efdp.exe" read as "evilexe.pdf").
const CONTROL = /\p{Cc}/u;
const LONE_SURROGATE = /\p{Cs}/u;
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u;

/**
 * Why a title its user wrote cannot be shown as it is, as the end of "title ..."; undefined when it can. An
 * explicit title is refused rather than silently changed, so its writer sees what was wrong.
 */
export function displayTextProblem(text: string): string | undefined {
  if (CONTROL.test(text)) return 'must not contain control characters';
  if (LONE_SURROGATE.test(text))
    return 'must not contain unpaired surrogates (text that is not valid Unicode)';
  if (BIDI_CONTROL.test(text))
    return 'must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)';
  return undefined;
}

/** A title its user writes: trimmed, 1 to `max` characters, refused by displayTextProblem, kept in NFC. */
export function displayTextSchema(max: number) {
  return z
    .string({ error: 'must be a string' })
    .transform((value) => value.trim())
    .refine((value) => value !== '', 'must not be empty')
    .refine((value) => value.length <= max, `must be at most ${max} characters`)
    .superRefine((value, context) => {
      const problem = displayTextProblem(value);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
    })
    .transform((value) => value.normalize('NFC'));
}

/**
 * Text from a document shown to others (a passage, a citation's excerpt) without the bidirectional controls that
 * would reorder what follows them on every screen it reaches; its lines and everything else kept.
 */
export function withoutBidiControls(text: string): string {
  return text.replace(/[\u202A-\u202E\u2066-\u2069]/gu, '');
}

/**
 * Text that came from elsewhere (a file name, a document's first line) made safe to show: on one line, without
 * control characters, unpaired surrogates or bidirectional controls, in Unicode NFC, trimmed; possibly empty.
 */
export function cleanDisplayText(text: string): string {
  return oneLine(
    text.replace(/[\p{Cc}\p{Cs}\u202A-\u202E\u2066-\u2069]/gu, (char) => (/\s/.test(char) ? ' ' : '')),
  ).normalize('NFC');
}

/**
 * An uploaded file's name as shown: its last path segment (a client may send "C:\docs\a.md" or "docs/a.md"), cleaned
 * as cleanDisplayText does; empty when nothing is left.
 */
export function displayFileName(name: string): string {
  return cleanDisplayText(name.split(/[\\/]/).pop() ?? '');
}
