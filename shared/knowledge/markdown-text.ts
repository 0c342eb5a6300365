// Markdown as text blocks, with marked's lexer held to linear time: front matter gives the title, nesting is bounded
// before marked recurses, overlong lines are cut and runs of emphasis delimiters made literal; raw HTML is read as
// HTML (html-text.ts).
import { Parser } from 'htmlparser2';
import { Lexer, type MarkedToken, type Token, type Tokens } from 'marked';

import { tooDeeplyNested, type HeadingLevel, type ReadingLimits, type TextBlock } from './document-text.js';
import { htmlBlocks } from './html-text.js';
import { preformatted, prose, pushText } from './text-blocks.js';

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

export function markdownBlocks(
  source: string,
  limits: ReadingLimits,
): { title?: string; blocks: TextBlock[] } {
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
