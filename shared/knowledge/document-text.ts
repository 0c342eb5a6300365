// What text extraction gives the chunker, whatever the format: the blocks in reading order with their pages,
// the limits a reading worker holds a document to, and the error of a document that cannot be read.
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

/** What a reading worker checks as it reads one document. */
export interface ReadingLimits {
  /** Most bytes a PDF's compressed streams may expand to. */
  maxInflatedBytes: number;
  /** Most characters of text the document may hold. */
  maxCharacters: number;
  /** Deepest nesting of Markdown quotes and lists, or of HTML elements. */
  maxNesting: number;
}

/** The reading workers: how many, and what each job may spend. */
export interface ReadingBudget {
  workers: number;
  /** Wall time of one job, from when a worker starts on it. */
  timeoutMs: number;
  /** Each worker's JavaScript heap. */
  memoryMb: number;
  limits: ReadingLimits;
}

/**
 * Why a document cannot be read: unreadable as its format (a corrupt PDF, text that is not UTF-8), empty, too
 * deeply nested, too large (it expands or holds more than allowed, or needs more memory) or too slow to read.
 */
export type ReadFailureCode = 'unreadable' | 'empty' | 'too_nested' | 'too_large' | 'too_slow';

/**
 * The content cannot be read within its limits or as its format says, or holds no text: the document fails with
 * this reason, for good (uploading it again gives the same), and its message is not delivered again.
 */
export class UnreadableDocumentError extends AppError {
  constructor(
    readonly failureCode: ReadFailureCode,
    message: string,
  ) {
    super(failureCode === 'empty' ? 'document_empty' : 'document_unreadable', message, 422);
  }
}

export function tooManyCharacters(limits: ReadingLimits): UnreadableDocumentError {
  return new UnreadableDocumentError(
    'too_large',
    `The document could not be read: it holds more than ${limits.maxCharacters.toLocaleString('en-US')} ` +
      'characters of text. Split it into smaller documents.',
  );
}

/** A size as people read it: "128 MB", "0.5 MB". */
export function megabytes(bytes: number): string {
  const value = bytes / (1024 * 1024);
  return `${Number.isInteger(value) ? value : Number(value.toFixed(2))} MB`;
}

/** A duration as people read it: "120 seconds", "0.5 seconds". */
export function seconds(ms: number): string {
  const value = ms / 1000;
  return `${Number.isInteger(value) ? value : Number(value.toFixed(2))} second${value === 1 ? '' : 's'}`;
}
