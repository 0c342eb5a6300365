// Reads a PDF's text page by page with Mozilla's pdf.js, within the job's limits (decoded bytes, characters). It runs
// only inside a reading worker (extract-worker.ts): pdf.js's Node build installs polyfills over built-ins
// (JSON.stringify and JSON.parse, Array.prototype.push, ...) that would slow every request of the instance.
import { createRequire } from 'node:module';
import path from 'node:path';

import type * as PdfjsLibrary from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

import {
  tooManyCharacters,
  UnreadableDocumentError,
  type ExtractedDocument,
  type ReadingLimits,
  type TextBlock,
} from './document-text.js';
import { inflationExceeded, withInflationLimit } from './pdf-inflation.js';
import { prose, pushText } from './text-blocks.js';

type Pdfjs = typeof PdfjsLibrary;

interface PdfjsData {
  cMapUrl: string;
  standardFontDataUrl: string;
}

let pdfjs: Promise<{ library: Pdfjs; data: PdfjsData }> | undefined;

const PDFJS_PARSER: string = 'pdfjs-dist/legacy/build/pdf.worker.mjs';

/**
 * pdf.js is large: a reading worker loads it as it starts (and again if that failed), before its first job. Its
 * parser (the "worker" half, which pdf.js runs in this same thread under Node) is loaded then too, and handed to
 * pdf.js through the global it looks for, instead of being imported during the first PDF's time budget.
 */
export function loadPdfjs(): Promise<{ library: Pdfjs; data: PdfjsData }> {
  pdfjs ??= Promise.all([
    import('pdfjs-dist/legacy/build/pdf.mjs'),
    // It ships no types, and none are needed: pdf.js takes the module as it is.
    import(PDFJS_PARSER) as Promise<unknown>,
  ]).then(
    ([library, parser]) => {
      (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = parser;
      return { library, data: pdfjsData() };
    },
    (error: unknown) => {
      pdfjs = undefined;
      throw error;
    },
  );
  return pdfjs;
}

/**
 * The data pdf.js ships for PDFs that rely on fonts they do not embed: the character maps of CJK fonts (without
 * them such text cannot be mapped to Unicode) and the standard fonts' programs (else pdf.js warns on each one).
 */
function pdfjsData(): PdfjsData {
  const root = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
  // pdf.js wants each ending with '/' (and Node reads such paths on Windows too).
  const directory = (name: string): string => `${path.join(root, name).split(path.sep).join('/')}/`;
  return { cMapUrl: directory('cmaps'), standardFontDataUrl: directory('standard_fonts') };
}

/** One line of a page's text, as pdf.js positions it. */
interface PdfLine {
  text: string;
  /** The baseline's height on the page (PDF space: it grows upwards). */
  y: number;
  /** The font size (the text's height). */
  size: number;
}

/** The PDF's text by page; throws UnreadableDocumentError when pdf.js cannot read it within the limits. */
export async function readPdfText(content: Uint8Array, limits: ReadingLimits): Promise<ExtractedDocument> {
  const { library, data } = await loadPdfjs();
  return withInflationLimit(limits.maxInflatedBytes, () => readPages(library, data, content, limits));
}

async function readPages(
  library: Pdfjs,
  data: PdfjsData,
  content: Uint8Array,
  limits: ReadingLimits,
): Promise<ExtractedDocument> {
  const task = library.getDocument({
    // A copy: pdf.js takes the buffer over (and refuses a Node Buffer).
    data: new Uint8Array(content),
    ...data,
    cMapPacked: true,
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    verbosity: 0,
  });
  try {
    const pdf = await task.promise;
    const blocks: TextBlock[] = [];
    let characters = 0;
    for (let pageNumber = 1; pageNumber <= pdf.numPages; pageNumber += 1) {
      const page = await pdf.getPage(pageNumber);
      const content = await page.getTextContent();
      const lines: PdfLine[] = [];
      let line: PdfLine | undefined;
      for (const item of content.items) {
        if (!('str' in item)) continue; // marked-content boundaries
        // transform = [a, b, c, d, e, f]: (c, d) is the text's vertical vector (its size), f its baseline's height.
        const [, , c = 0, d = 0, , y = 0] = item.transform as number[];
        const size = Math.hypot(c, d) || item.height;
        if (line !== undefined && Math.abs(line.y - y) > Math.max(line.size, size, 1) / 2) {
          lines.push(line);
          line = undefined;
        }
        if (item.str !== '') {
          if (line === undefined) line = { text: item.str, y, size };
          else line.text += item.str;
        }
        if (item.hasEOL && line !== undefined) {
          lines.push(line);
          line = undefined;
        }
      }
      if (line !== undefined) lines.push(line);
      for (const paragraph of pdfParagraphs(lines)) {
        characters += paragraph.length;
        pushText(blocks, paragraph, pageNumber);
      }
      page.cleanup();
      // pdf.js skips an operator that failed: a refused decode is known here, page by page.
      if (inflationExceeded()) throw new Error('A stream expands beyond the limit.');
      if (characters > limits.maxCharacters) throw tooManyCharacters(limits);
    }
    const title = await pdfTitle(pdf);
    return title === undefined
      ? { pageCount: pdf.numPages, blocks }
      : { title, pageCount: pdf.numPages, blocks };
  } catch (error) {
    if (error instanceof UnreadableDocumentError || inflationExceeded()) throw error;
    throw new UnreadableDocumentError('unreadable', `The PDF could not be read: ${pdfProblem(error)}`);
  } finally {
    await task.destroy();
  }
}

/**
 * A page's lines as paragraphs: a new paragraph where the gap to the previous line is wider than a line's (a blank
 * line), where the text goes back up (a new column) or where the font size changes (a heading, a caption).
 */
function pdfParagraphs(lines: readonly PdfLine[]): string[] {
  const paragraphs: string[] = [];
  let current = '';
  let previous: PdfLine | undefined;
  for (const line of lines) {
    const text = prose(line.text);
    if (text === '') continue;
    const size = Math.max(line.size, previous?.size ?? 0, 1);
    const gap = previous === undefined ? 0 : previous.y - line.y;
    const breaks =
      previous === undefined ||
      gap < 0 ||
      gap > size * 1.6 ||
      Math.abs(line.size - previous.size) > 0.2 * size;
    if (breaks) {
      if (current !== '') paragraphs.push(current);
      current = text;
    } else {
      current += joinsWithoutSpace(current, text) ? text : ` ${text}`;
    }
    previous = line;
  }
  if (current !== '') paragraphs.push(current);
  return paragraphs;
}

/** CJK punctuation, kana, ideographs and full-width forms; not Hangul: Korean puts spaces between words. */
const CJK_CHARACTER = /^[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]$/;

/** A line broken after a hyphen, or between two CJK characters (which are written without spaces), joins directly. */
function joinsWithoutSpace(before: string, after: string): boolean {
  if (/\p{L}-$/u.test(before)) return true;
  return CJK_CHARACTER.test(before.at(-1) ?? '') && CJK_CHARACTER.test(after[0] ?? '');
}

async function pdfTitle(pdf: PDFDocumentProxy): Promise<string | undefined> {
  // Metadata is optional: a PDF whose Info dictionary is damaged is still read for its text.
  const metadata = await pdf.getMetadata().catch(() => undefined);
  const title: unknown = metadata && 'Title' in metadata.info ? metadata.info.Title : undefined;
  return typeof title === 'string' ? prose(title) || undefined : undefined;
}

/** pdf.js's reason (InvalidPDFException, PasswordException, …) as the end of a sentence for the user. */
function pdfProblem(error: unknown): string {
  if (error instanceof Error && error.name === 'PasswordException') return 'it is protected by a password.';
  // pdf.js words its own findings for people ("Invalid PDF structure."); an engine error from inside it, which it
  // passes on as UnknownErrorException ("Cannot read properties of null"), becomes the plain reason.
  const own =
    error instanceof Error && /^(InvalidPDF|MissingPDF|Response)Exception$|^FormatError$/.test(error.name);
  const message = own ? error.message.trim() : '';
  if (message === '') return 'it is damaged or not a PDF.';
  return /[.!?]$/.test(message) ? message : `${message}.`;
}
