// The whitespace rules every format's text blocks follow (prose and preformatted text), and how a block joins the
// list: shared by the markup readers (extract-document.ts) and the PDF reader (pdf-text.ts, in its worker).
import type { TextBlock } from './document-text.js';

/** Control characters other than tab and line feed: never meaningful in indexed text. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** Prose: every run of whitespace (line breaks included) becomes one space. */
export function prose(text: string): string {
  return text.replace(CONTROL_CHARACTERS, ' ').replace(/\s+/g, ' ').trim();
}

/** Preformatted text (code): lines and indentation kept, trailing spaces and blank edges dropped. */
export function preformatted(text: string): string {
  return text
    .replace(CONTROL_CHARACTERS, '')
    .replace(/[ \t]+$/gm, '')
    .replace(/^\n+|\n+$/g, '');
}

export function pushText(blocks: TextBlock[], text: string, page?: number): void {
  if (text === '') return;
  blocks.push(page === undefined ? { kind: 'text', text } : { kind: 'text', text, page });
}
