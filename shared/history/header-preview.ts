// A conversation header's preview of a message: one rule for the commit's touch and for the History API.
import { oneLine } from '../plain-text.js';
import { PREVIEW_CHARS } from './contracts.js';

/** The start of a text on one line, at most PREVIEW_CHARS characters (never half a surrogate pair). */
export function preview(text: string): string {
  return Array.from(oneLine(text)).slice(0, PREVIEW_CHARS).join('');
}
