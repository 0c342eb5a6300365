// The title a conversation gets at once from its first user message (at most 80 characters), before the
// history worker's model title: one line, cut at a word, marked when cut.
import { cleanDisplayText } from '../plain-text.js';
import { FIRST_MESSAGE_TITLE_CHARS } from './contracts.js';

/** The title of a conversation whose first message has no text (only whitespace or control characters). */
export const UNTITLED = 'New conversation';

const ELLIPSIS = '…';
/** A cut at a word boundary is taken when it keeps at least this share of the room; else the text is cut mid-word. */
const MIN_WORD_CUT_SHARE = 0.5;

/**
 * The message as cleanDisplayText shows it (one line; control characters, unpaired surrogates and bidirectional
 * controls dropped; NFC); when longer than FIRST_MESSAGE_TITLE_CHARS, cut at the last word boundary that fits, with '…' (counted
 * in the limit). A very long first word is cut inside it; a character outside the Basic Multilingual Plane is
 * never split.
 */
export function firstMessageTitle(text: string): string {
  const line = cleanDisplayText(text);
  if (line === '') return UNTITLED;
  if (line.length <= FIRST_MESSAGE_TITLE_CHARS) return line;
  const room = FIRST_MESSAGE_TITLE_CHARS - ELLIPSIS.length;
  let head = '';
  for (const character of line) {
    if (head.length + character.length > room) break;
    head += character;
  }
  // The head ends at a word boundary when the next character is a space.
  const boundary = line[head.length] === ' ' ? head.length : head.lastIndexOf(' ');
  const cut = boundary >= room * MIN_WORD_CUT_SHARE ? head.slice(0, boundary) : head;
  return `${cut.trimEnd()}${ELLIPSIS}`;
}
