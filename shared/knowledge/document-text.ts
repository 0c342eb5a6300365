// What text extraction gives the chunker, whatever the format: the document's blocks in reading order (headings
// with their level, and text blocks: paragraphs, list items, table rows, code), each with its page where the
// format has pages (PDF). Extraction lives in extract-document.ts; this module is its contract and its error.
import { AppError } from '../errors.js';

export type TextBlock =
  | { kind: 'heading'; level: 1 | 2 | 3 | 4 | 5 | 6; text: string; page?: number }
  | { kind: 'text'; text: string; page?: number };

export interface ExtractedDocument {
  /** A title the content gives itself (Markdown's first level-1 heading, HTML's <title>, a PDF's Title). */
  title?: string;
  /** PDF: its pages; other formats: 1. */
  pageCount: number;
  blocks: TextBlock[];
}

/**
 * The content cannot be read as its format says (a corrupt PDF, text that is not UTF-8) or holds no text: the
 * document fails with this reason, for good (uploading it again gives the same).
 */
export class UnreadableDocumentError extends AppError {
  constructor(
    readonly failureCode: 'unreadable' | 'empty',
    message: string,
  ) {
    super(failureCode === 'empty' ? 'document_empty' : 'document_unreadable', message, 422);
  }
}
