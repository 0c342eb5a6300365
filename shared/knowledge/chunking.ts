// Cutting an extracted document into the chunks the knowledge base embeds: never across sections, up to a
// token target, cut at sentence ends, overlapping by whole sentences. Pure and deterministic.
import { estimateTokens } from '../conversation/tokens.js';

import { shortened } from './citation.js';
import { MAX_HEADING_CHARS, type ChunkDraft } from './contracts.js';
import type { ExtractedDocument } from './document-text.js';
import { utf8Bytes } from '../utf8.js';

export interface ChunkOptions {
  /** Estimated tokens a chunk aims at and never exceeds (KNOWLEDGE_CHUNK_TOKENS). */
  targetTokens: number;
  /** At most this many estimated tokens of the previous chunk's end begin the next in its section. */
  overlapTokens: number;
  /**
   * The most chunks the caller accepts: chunking stops at one more than this, so a document over the limit is
   * told apart (`chunks.length > maxChunks`) without cutting all of it. Absent: every chunk.
   */
  maxChunks?: number;
}

export function chunkDocument(document: ExtractedDocument, options: ChunkOptions): ChunkDraft[] {
  // estimateTokens is ceil(UTF-8 bytes / 3), so a token budget is a byte budget, counted once per piece (the
  // tests hold every chunk's estimate to the target, so a change of the estimate shows there).
  const maxBytes = Math.max(1, Math.floor(options.targetTokens)) * BYTES_PER_TOKEN;
  const overlapBytes = Math.max(0, Math.floor(options.overlapTokens)) * BYTES_PER_TOKEN;
  const limit = options.maxChunks ?? Number.POSITIVE_INFINITY;

  const chunks: ChunkDraft[] = [];
  const path: { level: number; text: string }[] = [];
  let headings: string[] = [];
  let current: Piece[] = [];
  let currentBytes = 0;
  /** The last chunk of the current section: where the next chunk's overlap comes from. */
  let previous: Piece[] = [];

  const add = (piece: Piece): void => {
    const last = current.at(-1);
    currentBytes += (last === undefined ? 0 : separatorBytes(last, piece)) + piece.bytes;
    current.push(piece);
  };
  const fits = (piece: Piece): boolean => {
    const last = current.at(-1);
    return currentBytes + (last === undefined ? 0 : separatorBytes(last, piece)) + piece.bytes <= maxBytes;
  };
  /** Closes the chunk being filled; false once the caller's limit is passed (nothing more is needed). */
  const emit = (): boolean => {
    if (current.length > 0) {
      chunks.push(draft(chunks.length, current, headings));
      previous = current;
      current = [];
      currentBytes = 0;
    }
    return chunks.length <= limit;
  };
  /** Starts the next chunk of the section with the overlap that leaves room for `piece`, then `piece`. */
  const startWith = (piece: Piece): boolean => {
    if (!emit()) return false;
    for (const repeated of overlap(previous, piece, overlapBytes, maxBytes)) add(repeated);
    add(piece);
    return true;
  };

  let blockNumber = 0;
  for (const block of document.blocks) {
    if (block.kind === 'heading') {
      if (!emit()) break;
      previous = [];
      while (path.length > 0 && path.at(-1)!.level >= block.level) path.pop();
      // A heading that runs on is cut: it is stored with each chunk of its section and cited by its answers.
      path.push({ level: block.level, text: shortened(block.text.trim(), MAX_HEADING_CHARS) });
      headings = path.map((heading) => heading.text).filter((text) => text !== '');
      continue;
    }
    // Leading blank lines and trailing space go; a code block's first indentation stays.
    const text = block.text.replace(/^(?:[ \t]*\n)+/, '').trimEnd();
    if (text.trim() === '') continue;
    blockNumber += 1;
    const whole: Piece = {
      text,
      bytes: utf8Bytes(text),
      block: blockNumber,
      page: block.page,
      kind: 'block',
    };
    let open = true;
    if (fits(whole)) add(whole);
    else if (whole.bytes <= maxBytes) open = startWith(whole);
    else {
      // Longer than a chunk: its sentences (or parts of them) fill the current chunk, then the next ones.
      for (const piece of splitLong(whole, maxBytes)) {
        if (fits(piece)) add(piece);
        else {
          open = startWith(piece);
          if (!open) break;
        }
      }
    }
    if (!open) break;
  }
  emit();
  return chunks;
}

/**
 * What is embedded for a chunk: the document's title and the chunk's heading path (so a chunk is found by what it
 * is about, even where its text does not say it), a blank line, then its text.
 */
export function embeddingInput(title: string, chunk: Pick<ChunkDraft, 'headings' | 'text'>): string {
  const context = [title.trim(), chunk.headings.join(' > ')].filter((line) => line !== '');
  return context.length === 0 ? chunk.text : `${context.join('\n')}\n\n${chunk.text}`;
}

const BYTES_PER_TOKEN = 3;

/** Between the blocks of a chunk. */
const BLOCK_SEPARATOR = '\n\n';

/** A piece of a block a chunk is made of: the whole block, one of its sentences, or part of a longer sentence. */
interface Piece {
  text: string;
  /** UTF-8 bytes of `text`. */
  bytes: number;
  /** Which block it comes from (pieces of one block are joined by `joiner`, blocks by a blank line). */
  block: number;
  page: number | undefined;
  kind: 'block' | 'sentence' | 'fragment';
  /** What goes between it and the previous piece of the same block (a space, a line break, nothing). */
  joiner?: string | undefined;
}

function separator(before: Piece, piece: Piece): string {
  return before.block === piece.block ? (piece.joiner ?? ' ') : BLOCK_SEPARATOR;
}

function separatorBytes(before: Piece, piece: Piece): number {
  return separator(before, piece).length; // separators are ASCII
}

function draft(index: number, pieces: readonly Piece[], headings: readonly string[]): ChunkDraft {
  const parts: string[] = [];
  let first: number | undefined;
  let last: number | undefined;
  pieces.forEach((piece, position) => {
    if (position > 0) parts.push(separator(pieces[position - 1]!, piece));
    parts.push(piece.text);
    if (piece.page !== undefined) {
      first = Math.min(first ?? piece.page, piece.page);
      last = Math.max(last ?? piece.page, piece.page);
    }
  });
  const text = parts.join('');
  const chunk: ChunkDraft = { index, text, headings: [...headings], tokens: estimateTokens(text) };
  if (first !== undefined && last !== undefined) {
    // A range: a page between two that only holds a figure is still where the chunk's text runs.
    chunk.pages = Array.from({ length: last - first + 1 }, (_, offset) => first! + offset);
  }
  return chunk;
}

/**
 * The whole sentences at the end of the previous chunk, at most `overlapBytes` of them and leaving room for
 * `next` within `maxBytes`. A part of a sentence cut at words is not a whole sentence, so the overlap stops there.
 */
function overlap(previous: readonly Piece[], next: Piece, overlapBytes: number, maxBytes: number): Piece[] {
  if (overlapBytes === 0) return [];
  const taken: Piece[] = []; // last first
  let overlapText = 0;
  let toNext = 0;
  for (let position = previous.length - 1; position >= 0; position -= 1) {
    const piece = previous[position]!;
    if (piece.kind === 'fragment') break;
    const units = piece.kind === 'block' ? sentencePieces(piece) : [piece];
    for (let unit = units.length - 1; unit >= 0; unit -= 1) {
      const candidate = units[unit]!;
      const first = taken.at(-1);
      const text =
        overlapText + candidate.bytes + (first === undefined ? 0 : separatorBytes(candidate, first));
      const join = first === undefined ? separatorBytes(candidate, next) : toNext;
      if (text > overlapBytes || text + join + next.bytes > maxBytes) return taken.reverse();
      taken.push(candidate);
      overlapText = text;
      toNext = join;
    }
  }
  return taken.reverse();
}

/** A block longer than a chunk, as pieces that each fit one: its sentences, a longer sentence cut at words. */
function splitLong(block: Piece, maxBytes: number): Piece[] {
  const pieces: Piece[] = [];
  for (const sentence of sentencePieces(block)) {
    if (sentence.bytes <= maxBytes) pieces.push(sentence);
    else pieces.push(...splitWords(sentence, maxBytes));
  }
  return pieces;
}

/**
 * Where a sentence ends: after . ! ? … (and closing quotes or brackets) and a space before anything but a lowercase
 * letter (so "e.g. this" stays whole), after the CJK full stops, and at a line break (code, preformatted text).
 * Each run is matched from its start only (the lookbehinds), so long runs of dots or spaces cost linear time.
 */
const SENTENCE_END =
  /(?<![.!?…])[.!?…]+["'’”)\]»]*\s+(?![\s\p{Ll}])|(?<![。！？])[。！？]+["'’”)\]」』]*\s*|(?<![ \t])[ \t]*\n+/gu;

function sentencePieces(block: Piece): Piece[] {
  const { text } = block;
  const pieces: Piece[] = [];
  let start = 0;
  let joiner = block.joiner;
  const push = (end: number, next: string): void => {
    const sentence = text.slice(start, end).trimEnd();
    if (sentence !== '') {
      const { block: number, page } = block;
      pieces.push({
        text: sentence,
        bytes: utf8Bytes(sentence),
        block: number,
        page,
        kind: 'sentence',
        joiner,
      });
      joiner = next;
    }
  };
  for (const match of text.matchAll(SENTENCE_END)) {
    const end = match.index + match[0].length;
    if (end >= text.length) break;
    const gap = match[0].replace(/^[^\s]*/, '');
    push(end, gap.includes('\n') ? '\n' : gap === '' ? '' : ' ');
    start = end;
  }
  push(text.length, '');
  if (pieces.length === 1)
    return [{ ...pieces[0]!, kind: block.kind === 'fragment' ? 'fragment' : 'sentence' }];
  return pieces;
}

/** A sentence longer than a chunk, cut between words (a word longer than a chunk, between characters). */
function splitWords(sentence: Piece, maxBytes: number): Piece[] {
  const pieces: Piece[] = [];
  let words: string[] = [];
  let bytes = 0;
  let joiner = sentence.joiner;
  const close = (): void => {
    if (words.length === 0) return;
    const text = words.join(' ');
    pieces.push({ ...sentence, text, bytes, kind: 'fragment', joiner });
    joiner = ' ';
    words = [];
    bytes = 0;
  };
  for (const word of sentence.text.split(/\s+/)) {
    if (word === '') continue;
    const wordBytes = utf8Bytes(word);
    if (wordBytes > maxBytes) {
      close();
      for (const part of splitCharacters(word, maxBytes)) {
        pieces.push({ ...sentence, text: part.text, bytes: part.bytes, kind: 'fragment', joiner });
        joiner = '';
      }
      joiner = ' ';
      continue;
    }
    if (words.length > 0 && bytes + 1 + wordBytes > maxBytes) close();
    bytes += (words.length > 0 ? 1 : 0) + wordBytes;
    words.push(word);
  }
  close();
  return pieces;
}

function splitCharacters(word: string, maxBytes: number): { text: string; bytes: number }[] {
  const parts: { text: string; bytes: number }[] = [];
  let start = 0;
  let bytes = 0;
  let position = 0;
  for (const character of word) {
    const size = utf8Bytes(character);
    if (bytes + size > maxBytes && bytes > 0) {
      parts.push({ text: word.slice(start, position), bytes });
      start = position;
      bytes = 0;
    }
    bytes += size;
    position += character.length;
  }
  if (bytes > 0) parts.push({ text: word.slice(start), bytes });
  return parts;
}
