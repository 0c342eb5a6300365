// Text extraction for the knowledge base, inside a reading worker (extract-worker.ts, started by extract-pool.ts):
// each format's reader (markdown-text.ts, html-text.ts, pdf-text.ts, plain text here) gives the same headings and
// text blocks (document-text.ts) for the chunker, within the job's ReadingLimits, in time linear in the input.
import type { DocumentFormat } from './contracts.js';
import {
  tooDeeplyNested,
  tooManyCharacters,
  UnreadableDocumentError,
  type ExtractedDocument,
  type ReadingLimits,
  type TextBlock,
} from './document-text.js';
import { htmlBlocks } from './html-text.js';
import { markdownBlocks } from './markdown-text.js';
import { readPdfText } from './pdf-text.js';
import { withoutBidiControls } from '../plain-text.js';
import { prose, pushText } from './text-blocks.js';

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
  // A passage reaches every user of a shared library (search results, citations, answers): a bidirectional control
  // in it would reorder what they read, so none is kept.
  for (const block of document.blocks) block.text = withoutBidiControls(block.text);
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

function extractMarkup(
  format: Exclude<DocumentFormat, 'pdf'>,
  source: string,
  limits: ReadingLimits,
): ExtractedDocument {
  // Noncharacters are never text: the Markdown reader (markdown-text.ts) uses three as stand-ins.
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

/** Plain text: paragraphs are separated by blank lines; a paragraph's own line breaks are wrapping. */
function plainTextBlocks(text: string): TextBlock[] {
  const blocks: TextBlock[] = [];
  for (const paragraph of text.split(/\n[ \t]*\n/)) pushText(blocks, prose(paragraph));
  return blocks;
}
