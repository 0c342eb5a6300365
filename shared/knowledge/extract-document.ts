// Text extraction for the knowledge base, inside a reading worker (extract-worker.ts, started by extract-pool.ts):
// Markdown (marked's lexer), plain text, HTML (htmlparser2) and PDF (pdf-text.ts) become the same list of headings
// and text blocks (document-text.ts) for the chunker, within the job's ReadingLimits, in time linear in the input.
import { Parser } from 'htmlparser2';
import { Lexer, type MarkedToken, type Token, type Tokens } from 'marked';

import type { DocumentFormat } from './contracts.js';
import {
  tooManyCharacters,
  UnreadableDocumentError,
  type ExtractedDocument,
  type ReadingLimits,
  type TextBlock,
} from './document-text.js';
import { readPdfText } from './pdf-text.js';
import { preformatted, prose, pushText } from './text-blocks.js';

type HeadingLevel = Extract<TextBlock, { kind: 'heading' }>['level'];

/** The document's text; throws UnreadableDocumentError when it cannot be read within the limits, or is empty. */
export async function extractDocument(
  format: DocumentFormat,
  content: Uint8Array,
  limits: ReadingLimits,
): Promise<ExtractedDocument> {
  const document =
    format === 'pdf'
      ? await readPdfText(content, limits)
      : extractMarkup(format, decodeUtf8(content, format), limits);
  const characters = document.blocks.reduce((sum, block) => sum + block.text.length, 0);
  if (characters > limits.maxCharacters) throw tooManyCharacters(limits);
  if (!document.blocks.some((block) => block.kind === 'text')) {
    throw new UnreadableDocumentError(
      'empty',
      format === 'pdf'
        ? 'The PDF has no text to index: its pages may be scanned images, which need text recognition (OCR) first.'
        : 'The document has no text to index.',
    );
  }
  return document;
}

function tooDeeplyNested(limits: ReadingLimits): UnreadableDocumentError {
  return new UnreadableDocumentError(
    'too_nested',
    `The document could not be read: it is too deeply nested (more than ${limits.maxNesting} levels of ` +
      'quotes, lists or elements).',
  );
}

function extractMarkup(
  format: Exclude<DocumentFormat, 'pdf'>,
  source: string,
  limits: ReadingLimits,
): ExtractedDocument {
  // Noncharacters are never text: the Markdown reader uses three as stand-ins (literalDelimiters).
  const text = source.replace(/\r\n?/g, '\n').replace(/[\uFDD0-\uFDD2]/g, '\uFFFD');
  try {
    switch (format) {
      case 'markdown':
        return { pageCount: 1, ...markdownBlocks(text, limits) };
      case 'html':
        return { pageCount: 1, ...htmlBlocks(text, limits) };
      case 'text':
        return { pageCount: 1, blocks: plainTextBlocks(text) };
    }
  } catch (error) {
    // The nesting checks keep the parsers' recursion shallow; should some other construct recurse this deep, the
    // document is still refused for what it is rather than with the engine's message.
    if (error instanceof RangeError && /call stack/i.test(error.message)) throw tooDeeplyNested(limits);
    throw error;
  }
}

function decodeUtf8(content: Uint8Array, format: DocumentFormat): string {
  try {
    // fatal: a byte sequence that is not UTF-8 throws instead of becoming U+FFFD; a byte-order mark is dropped.
    return new TextDecoder('utf-8', { fatal: true }).decode(content);
  } catch {
    throw new UnreadableDocumentError(
      'unreadable',
      `The ${format === 'text' ? 'text' : format === 'html' ? 'HTML' : 'Markdown'} document is not valid UTF-8: ` +
        'save it as UTF-8 and upload it again.',
    );
  }
}

// --- Plain text -------------------------------------------------------------------------------------------------

/** Paragraphs are separated by blank lines; a paragraph's own line breaks are wrapping. */
function plainTextBlocks(text: string): TextBlock[] {
  const blocks: TextBlock[] = [];
  for (const paragraph of text.split(/\n[ \t]*\n/)) pushText(blocks, prose(paragraph));
  return blocks;
}

// --- Markdown ---------------------------------------------------------------------------------------------------

/**
 * YAML front matter (`---`, a `key:` line and more, `---` at the very start), which Markdown would otherwise read as
 * a heading. It must open with a key, so a document that merely starts with a rule keeps its text.
 */
const FRONT_MATTER = /^---[ \t]*\n([A-Za-z_][\w-]*:[^\n]*(?:\n[\s\S]*?)?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/;

/**
 * Emphasis delimiters (`*`, `_`, `~`) one inline run may hold before they are all read as literal characters:
 * marked looks for a closer from each delimiter to the end of the run, so a run of thousands (`_a_a_a…`) costs the
 * square of its length. Real prose holds a few; a run over this keeps its text, with the markers shown.
 */
const MAX_INLINE_DELIMITERS = 64;

/**
 * Stand-ins for `*`, `_` and `~` in a run with too many: Unicode noncharacters, which no text may carry (the
 * document's own are replaced with U+FFFD first), so marked reads them as plain text and they are put back after.
 */
const STAND_INS: Readonly<Record<string, string>> = { '*': '\uFDD0', _: '\uFDD1', '~': '\uFDD2' };
const DELIMITERS: Readonly<Record<string, string>> = { '\uFDD0': '*', '\uFDD1': '_', '\uFDD2': '~' };

/** marked's lexer, with each inline run's emphasis delimiters made literal when there are too many. */
class BoundedLexer extends Lexer {
  override inlineTokens(src: string, tokens?: Token[]): Token[] {
    return super.inlineTokens(literalDelimiters(src), tokens);
  }
}

function literalDelimiters(src: string): string {
  let delimiters = 0;
  for (let index = 0; index < src.length; index += 1) {
    const code = src.charCodeAt(index);
    if (code === 0x2a || code === 0x5f || code === 0x7e) delimiters += 1;
  }
  if (delimiters <= MAX_INLINE_DELIMITERS) return src;
  return src.replace(/[*_~]/g, (delimiter) => STAND_INS[delimiter]!);
}

/** The delimiters literalDelimiters stood in for, back in the text. */
function restoreDelimiters(text: string): string {
  return text.replace(/[\uFDD0-\uFDD2]/g, (standIn) => DELIMITERS[standIn]!);
}

/**
 * Refuses Markdown nested deeper than limits.maxNesting before marked sees it: marked reads each quote and list
 * level by recursion, and `> > > …` 50,000 times over overflows the stack. A line's depth is its quote and list
 * markers, and half the indentation before each (a nested list is indented by its parent's marker).
 */
function checkMarkdownNesting(text: string, limits: ReadingLimits): void {
  let depth = 0;
  let indent = 0;
  let lineStart = true;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (char === 0x0a) {
      depth = 0;
      indent = 0;
      lineStart = true;
      continue;
    }
    if (!lineStart) continue;
    if (char === 0x20) indent += 1;
    else if (char === 0x09) indent += 4;
    else {
      const marker = containerMarker(text, index);
      if (marker === 0) {
        lineStart = false;
        continue;
      }
      depth += 1 + Math.floor(indent / 2);
      if (depth > limits.maxNesting) throw tooDeeplyNested(limits);
      indent = 0;
      index += marker - 1;
    }
  }
}

/** The length of the quote or list marker at `index` (`>`, `-`, `+`, `*`, `1.`, `1)`), or 0 when there is none. */
function containerMarker(text: string, index: number): number {
  const char = text[index];
  if (char === '>') return 1;
  let end = index;
  if (char === '-' || char === '+' || char === '*') end = index + 1;
  else {
    while (
      end < text.length &&
      end - index < 9 &&
      text.charCodeAt(end) >= 0x30 &&
      text.charCodeAt(end) <= 0x39
    )
      end += 1;
    if (end === index || (text[end] !== '.' && text[end] !== ')')) return 0;
    end += 1;
  }
  const after = text[end];
  return after === undefined || after === ' ' || after === '\t' || after === '\n' ? end - index : 0;
}

/**
 * The longest line marked is given: its block rules are regular expressions run over whole lines and paragraphs,
 * and on a line of megabytes the engine's backtracking overflows the stack. A longer line is cut into paragraphs of
 * at most this many characters: its text stays whole, in order.
 */
const MAX_LINE_CHARS = 8_192;

/**
 * Cuts each line longer than MAX_LINE_CHARS, before a word where it can (a space then a letter: the new paragraph
 * cannot start a list, a heading or a quote), else where the line reaches the limit.
 */
function wrapLongLines(text: string): string {
  const parts: string[] = [];
  let lineStart = 0;
  let from = 0;
  for (let index = 0; index < text.length; index += 1) {
    if (text.charCodeAt(index) === 0x0a) {
      lineStart = index + 1;
      continue;
    }
    if (index - lineStart < MAX_LINE_CHARS) continue;
    let cut = index;
    for (let back = index; back > lineStart + MAX_LINE_CHARS / 2; back -= 1) {
      if (text[back - 1] === ' ' && /\p{L}/u.test(text[back]!)) {
        cut = back;
        break;
      }
    }
    parts.push(text.slice(from, cut), '\n\n');
    from = cut;
    lineStart = cut;
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(from));
  return parts.join('');
}

function markdownBlocks(source: string, limits: ReadingLimits): { title?: string; blocks: TextBlock[] } {
  let text = source;
  let title: string | undefined;
  const frontMatter = FRONT_MATTER.exec(text);
  if (frontMatter) {
    text = text.slice(frontMatter[0].length);
    const titleLine = /^title:[ \t]*(.+)$/m.exec(frontMatter[1]!);
    if (titleLine) title = prose(titleLine[1]!.replace(/^(["'])(.*)\1$/, '$2')) || undefined;
  }
  checkMarkdownNesting(text, limits);
  const blocks: TextBlock[] = [];
  markdownTokens(new BoundedLexer({ gfm: true }).lex(wrapLongLines(text)), blocks, limits);
  title ??= blocks.find((block) => block.kind === 'heading' && block.level === 1)?.text;
  return title === undefined ? { blocks } : { title, blocks };
}

function markdownTokens(tokens: readonly Token[], blocks: TextBlock[], limits: ReadingLimits): void {
  for (const token of tokens) {
    // No marked extension is installed, so every token is one of marked's own.
    const known = token as MarkedToken;
    switch (known.type) {
      case 'heading': {
        const text = inlineText(known.tokens);
        if (text !== '') blocks.push({ kind: 'heading', level: headingLevel(known.depth), text });
        break;
      }
      case 'paragraph':
        pushText(blocks, inlineText(known.tokens));
        break;
      case 'text':
        pushText(blocks, inlineText(known.tokens ?? [known]));
        break;
      case 'list':
        markdownList(known, blocks, limits);
        break;
      case 'blockquote':
        markdownTokens(known.tokens, blocks, limits);
        break;
      case 'table':
        for (const row of [known.header, ...known.rows]) {
          pushText(
            blocks,
            row
              .map((cell) => inlineText(cell.tokens))
              .filter((cell) => cell !== '')
              .join(' | '),
          );
        }
        break;
      case 'code':
        pushText(blocks, preformatted(known.text));
        break;
      case 'html':
        // Raw HTML in Markdown: its text (a <details> block, a table written in HTML) is part of the document.
        if (known.block) blocks.push(...htmlBlocks(known.text, limits).blocks);
        break;
      default:
        // space, hr, def (link definitions), and anything else without readable text.
        break;
    }
  }
}

function markdownList(list: Tokens.List, blocks: TextBlock[], limits: ReadingLimits): void {
  const first = typeof list.start === 'number' ? list.start : 1;
  list.items.forEach((item, position) => {
    const own: string[] = [];
    const nested: Token[] = [];
    for (const child of item.tokens) {
      if (child.type === 'text' || child.type === 'paragraph') own.push(inlineText(child.tokens ?? [child]));
      else if (child.type !== 'checkbox') nested.push(child);
    }
    const text = prose(own.join(' '));
    if (text !== '') pushText(blocks, `${list.ordered ? `${first + position}.` : '-'} ${text}`);
    markdownTokens(nested, blocks, limits);
  });
}

/** A heading's or a paragraph's inline tokens as plain text: markup dropped, entities decoded, spaces collapsed. */
function inlineText(tokens: readonly Token[]): string {
  const parts: string[] = [];
  collectInline(tokens, parts);
  return restoreDelimiters(prose(parts.join('')));
}

function collectInline(tokens: readonly Token[], parts: string[]): void {
  for (const token of tokens) {
    const known = token as MarkedToken;
    switch (known.type) {
      case 'text':
        if (known.tokens) collectInline(known.tokens, parts);
        else parts.push(known.escaped === true ? known.text : decodeEntities(known.text));
        break;
      case 'escape':
      case 'codespan':
        parts.push(known.text);
        break;
      case 'image':
        parts.push(known.text);
        break;
      case 'br':
        parts.push(' ');
        break;
      case 'html':
      case 'checkbox':
        // Inline tags are markup; the text between them arrives as text tokens.
        break;
      default:
        if ('tokens' in known && known.tokens) collectInline(known.tokens, parts);
        else if ('text' in known) parts.push(known.text);
        break;
    }
  }
}

function headingLevel(depth: number): HeadingLevel {
  return Math.min(6, Math.max(1, Math.trunc(depth))) as HeadingLevel;
}

/** Named character references (`&amp;`, `&nbsp;`) in Markdown text, which marked leaves for the HTML renderer. */
function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  const parts: string[] = [];
  const parser = new Parser({ ontext: (part) => void parts.push(part) }, { decodeEntities: true });
  parser.end(text.replaceAll('<', '&lt;'));
  return parts.join('');
}

// --- HTML -------------------------------------------------------------------------------------------------------

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

function htmlBlocks(html: string, limits: ReadingLimits): { title?: string; blocks: TextBlock[] } {
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
