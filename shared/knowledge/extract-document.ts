// Text extraction for the knowledge base: Markdown (marked's lexer), plain text, HTML (htmlparser2) and PDF (Mozilla's
// pdf.js, page by page, in a worker thread: pdf-reader.ts) become the same list of headings and text blocks
// (document-text.ts) for the chunker.
// Content that cannot be read as its format, or that holds no text, fails with UnreadableDocumentError.
import { Parser } from 'htmlparser2';
import { Lexer, type MarkedToken, type Token, type Tokens } from 'marked';

import type { DocumentFormat } from './contracts.js';
import { UnreadableDocumentError, type ExtractedDocument, type TextBlock } from './document-text.js';
import { readPdf } from './pdf-reader.js';
import { preformatted, prose, pushText } from './text-blocks.js';

type HeadingLevel = Extract<TextBlock, { kind: 'heading' }>['level'];

export async function extractDocument(
  format: DocumentFormat,
  content: Uint8Array,
): Promise<ExtractedDocument> {
  const document =
    format === 'pdf' ? await readPdf(content) : extractMarkup(format, decodeUtf8(content, format));
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

function extractMarkup(format: Exclude<DocumentFormat, 'pdf'>, source: string): ExtractedDocument {
  const text = source.replace(/\r\n?/g, '\n');
  switch (format) {
    case 'markdown':
      return { pageCount: 1, ...markdownBlocks(text) };
    case 'html':
      return { pageCount: 1, ...htmlBlocks(text) };
    case 'text':
      return { pageCount: 1, blocks: plainTextBlocks(text) };
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

function markdownBlocks(source: string): { title?: string; blocks: TextBlock[] } {
  let text = source;
  let title: string | undefined;
  const frontMatter = FRONT_MATTER.exec(text);
  if (frontMatter) {
    text = text.slice(frontMatter[0].length);
    const titleLine = /^title:[ \t]*(.+)$/m.exec(frontMatter[1]!);
    if (titleLine) title = prose(titleLine[1]!.replace(/^(["'])(.*)\1$/, '$2')) || undefined;
  }
  const blocks: TextBlock[] = [];
  markdownTokens(new Lexer({ gfm: true }).lex(text), blocks);
  title ??= blocks.find((block) => block.kind === 'heading' && block.level === 1)?.text;
  return title === undefined ? { blocks } : { title, blocks };
}

function markdownTokens(tokens: readonly Token[], blocks: TextBlock[]): void {
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
        markdownList(known, blocks);
        break;
      case 'blockquote':
        markdownTokens(known.tokens, blocks);
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
        if (known.block) blocks.push(...htmlBlocks(known.text).blocks);
        break;
      default:
        // space, hr, def (link definitions), and anything else without readable text.
        break;
    }
  }
}

function markdownList(list: Tokens.List, blocks: TextBlock[]): void {
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
    markdownTokens(nested, blocks);
  });
}

/** A heading's or a paragraph's inline tokens as plain text: markup dropped, entities decoded, spaces collapsed. */
function inlineText(tokens: readonly Token[]): string {
  const parts: string[] = [];
  collectInline(tokens, parts);
  return prose(parts.join(''));
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

function htmlBlocks(html: string): { title?: string; blocks: TextBlock[] } {
  const blocks: TextBlock[] = [];
  const titleParts: string[] = [];
  let parts: string[] = [];
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
          if (parts.some((part) => part.trim() !== '')) parts.push(' | ');
        } else if (name === 'br') {
          parts.push(preDepth > 0 ? '\n' : ' ');
        }
      },
      ontext(text) {
        if (skipping.at(-1) === true) return;
        if (inTitle) titleParts.push(text);
        else parts.push(text);
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
