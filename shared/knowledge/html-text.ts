// HTML as text blocks (htmlparser2, one pass): headings with their level, block elements and table rows as text,
// lists marked as Markdown would write them, and what is not the document's text (scripts, navigation, hidden
// parts, controls) skipped; nesting is bounded by the job's ReadingLimits.
import { Parser } from 'htmlparser2';

import { tooDeeplyNested, type HeadingLevel, type ReadingLimits, type TextBlock } from './document-text.js';
import { preformatted, prose, pushText } from './text-blocks.js';

/** Elements whose content is not the document's text: code, styles, navigation, embedded objects, controls. */
const SKIPPED_ELEMENTS = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'nav',
  'svg',
  'math',
  'iframe',
  'object',
  'canvas',
  'button',
  'select',
  'datalist',
]);

/** Elements that start and end a block of text. Table cells are not among them: a row is one block. */
const BLOCK_ELEMENTS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'caption',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'hgroup',
  'hr',
  'legend',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'tfoot',
  'thead',
  'tr',
  'ul',
]);

const HEADING_ELEMENT = /^h([1-6])$/;

export function htmlBlocks(html: string, limits: ReadingLimits): { title?: string; blocks: TextBlock[] } {
  const blocks: TextBlock[] = [];
  const titleParts: string[] = [];
  let parts: string[] = [];
  /** Whether `parts` holds more than whitespace: kept as parts are added, so a row of many cells stays linear. */
  let partsHaveText = false;
  const addPart = (part: string): void => {
    parts.push(part);
    if (!partsHaveText && part.trim() !== '') partsHaveText = true;
  };
  /** For each open element, whether it (or an ancestor) is skipped. */
  const skipping: boolean[] = [];
  /** The open lists, innermost last: an item is marked as Markdown would write it ("- " or "3. "). */
  const lists: { ordered: boolean; next: number }[] = [];
  /** A list item's marker, written before the item's first text (which may sit in a nested <p>). */
  let marker = '';
  let inTitle = false;
  let preDepth = 0;
  let heading: HeadingLevel | undefined;

  const flush = (): void => {
    const raw = parts.join('');
    parts = [];
    partsHaveText = false;
    if (heading !== undefined) {
      const text = prose(raw);
      if (text !== '') blocks.push({ kind: 'heading', level: heading, text });
      return;
    }
    const text = preDepth > 0 ? preformatted(raw) : prose(raw);
    if (text === '') return;
    pushText(blocks, `${marker}${text}`);
    marker = '';
  };

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        const skipped =
          skipping.at(-1) === true ||
          SKIPPED_ELEMENTS.has(name) ||
          'hidden' in attributes ||
          attributes['aria-hidden'] === 'true';
        skipping.push(skipped);
        // Every element still open is a level: htmlparser2 keeps them in a list it shifts at each new one.
        if (skipping.length > limits.maxNesting) throw tooDeeplyNested(limits);
        if (skipped) return;
        if (name === 'title') inTitle = true;
        const level = HEADING_ELEMENT.exec(name)?.[1];
        if (level !== undefined) {
          flush();
          heading = Number(level) as HeadingLevel;
        } else if (BLOCK_ELEMENTS.has(name)) {
          flush();
          if (name === 'pre') preDepth += 1;
          else if (name === 'ul' || name === 'ol') {
            const start = Number.parseInt(attributes.start ?? '1', 10);
            lists.push({ ordered: name === 'ol', next: Number.isNaN(start) ? 1 : start });
          } else if (name === 'li') {
            const list = lists.at(-1);
            if (list?.ordered === true) marker = `${list.next++}. `;
            else if (list !== undefined) marker = '- ';
          }
        } else if (name === 'td' || name === 'th') {
          if (partsHaveText) addPart(' | ');
        } else if (name === 'br') {
          addPart(preDepth > 0 ? '\n' : ' ');
        }
      },
      ontext(text) {
        if (skipping.at(-1) === true) return;
        if (inTitle) titleParts.push(text);
        else addPart(text);
      },
      onclosetag(name) {
        if (skipping.pop() === true) return;
        if (name === 'title') inTitle = false;
        else if (HEADING_ELEMENT.test(name)) {
          flush();
          heading = undefined;
        } else if (BLOCK_ELEMENTS.has(name)) {
          flush();
          if (name === 'pre') preDepth = Math.max(0, preDepth - 1);
          else if (name === 'ul' || name === 'ol') lists.pop();
          else if (name === 'li') marker = '';
        }
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  flush();

  const title =
    prose(titleParts.join('')) || blocks.find((block) => block.kind === 'heading' && block.level === 1)?.text;
  return title ? { title, blocks } : { blocks };
}
