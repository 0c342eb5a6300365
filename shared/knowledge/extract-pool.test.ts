// The reading workers on hostile documents, under budgets lowered through their settings: each fails with a reason a
// user understands (too deeply nested, expands beyond, needs more memory, took too long) or is read in linear time;
// the pool keeps serving after a worker is lost, and one user's bombs never hold up another user's document.
import { afterEach, describe, expect, it } from 'vitest';

import { makeInflatingPdf, makeNestedFormsPdf } from '../../test/support/make-pdf-bombs.js';
import { makePdf } from '../../test/support/make-pdf.js';

import type { DocumentFormat } from './contracts.js';
import { UnreadableDocumentError, type ExtractedDocument } from './document-text.js';
import { createDocumentReader, type DocumentReader } from './extract-pool.js';
import { readingBudget } from './settings.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

// A worker's start (tsx compiling the readers, pdf.js loading) takes seconds on a busy machine.
const HEAVY = 180_000;

let readers: DocumentReader[] = [];
afterEach(async () => {
  await Promise.all(readers.map((reader) => reader.close()));
  readers = [];
});

function readerWith(settings: Record<string, string> = {}): DocumentReader {
  const reader = createDocumentReader(readingBudget(settings));
  readers.push(reader);
  return reader;
}

function read(
  reader: DocumentReader,
  format: DocumentFormat,
  content: Uint8Array,
  owner = 'user_001',
): Promise<ExtractedDocument> {
  return reader.read({ format, content, owner });
}

async function refusal(promise: Promise<unknown>): Promise<UnreadableDocumentError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(UnreadableDocumentError);
  return error as UnreadableDocumentError;
}

/** Settles with the promise, recording when it did among other events. */
function tracked<T>(promise: Promise<T>, events: string[], name: string): Promise<T> {
  return promise.finally(() => events.push(name));
}

describe('the reading workers: nesting', () => {
  it(
    'refuses Markdown quoted 50,000 levels deep as too deeply nested, instead of overflowing the stack',
    async () => {
      const reader = readerWith({ KNOWLEDGE_MAX_NESTING: '64' });

      const error = await refusal(read(reader, 'markdown', utf8(`${'> '.repeat(50_000)}deep`)));

      expect(error.failureCode).toBe('too_nested');
      expect(error.message).toBe(
        'The document could not be read: it is too deeply nested (more than 64 levels of quotes, lists or elements).',
      );
      const lists = await refusal(read(reader, 'markdown', utf8(`${'- '.repeat(50_000)}deep`)));
      expect(lists.failureCode).toBe('too_nested');
      // Nesting within the limit is read as before.
      const quoted = await read(reader, 'markdown', utf8(`${'> '.repeat(20)}Quoted twenty times.`));
      expect(quoted.blocks).toEqual([{ kind: 'text', text: 'Quoted twenty times.' }]);
    },
    HEAVY,
  );

  it(
    'refuses HTML of 100,000 nested <div>s as too deeply nested',
    async () => {
      const reader = readerWith({ KNOWLEDGE_MAX_NESTING: '64' });

      const error = await refusal(read(reader, 'html', utf8(`${'<div>'.repeat(100_000)}deep`)));

      expect(error.failureCode).toBe('too_nested');
      expect(error.message).toMatch(/too deeply nested \(more than 64 levels/);
    },
    HEAVY,
  );
});

describe('the reading workers: inputs that cost the square of their size', () => {
  // Each within a budget the quadratic readers needed hours for, and the linear ones seconds.
  const budget = { KNOWLEDGE_READ_TIMEOUT_MS: '90000' };

  it(
    'reads Markdown of 1,000,000 `_a` and of 1,000,000 `*a`, keeping the text',
    async () => {
      const reader = readerWith(budget);

      const underscores = await read(reader, 'markdown', utf8('_a'.repeat(1_000_000)));
      const stars = await read(reader, 'markdown', utf8('*a'.repeat(1_000_000)));

      for (const document of [underscores, stars]) {
        const text = document.blocks.map((block) => block.text).join('');
        expect(text.replaceAll(/[*_\s]/g, '')).toBe('a'.repeat(1_000_000));
      }
    },
    HEAVY,
  );

  it(
    'reads an HTML table row of 200,000 cells, and a row of 40,000 blank cells as empty',
    async () => {
      const reader = readerWith(budget);

      const row = await read(reader, 'html', utf8(`<table><tr>${'<td>x</td>'.repeat(200_000)}</tr></table>`));
      const blank = await refusal(read(reader, 'html', utf8('<td> </td>'.repeat(40_000))));

      expect(row.blocks).toHaveLength(1);
      expect(row.blocks[0]!.text).toBe(Array.from({ length: 200_000 }, () => 'x').join(' | '));
      expect(blank.failureCode).toBe('empty');
    },
    HEAVY,
  );

  it(
    'keeps the emphasis of ordinary prose: only a run with very many delimiters is read literally',
    async () => {
      const reader = readerWith();

      const document = await read(reader, 'markdown', utf8('Some *light* and __strong__ ~~old~~ text.'));

      expect(document.blocks).toEqual([{ kind: 'text', text: 'Some light and strong old text.' }]);
    },
    HEAVY,
  );
});

describe('the reading workers: size and memory', () => {
  it(
    'fails a PDF whose content stream inflates beyond KNOWLEDGE_MAX_INFLATED_MB',
    async () => {
      const reader = readerWith({ KNOWLEDGE_MAX_INFLATED_MB: '8' });
      const bomb = await makeInflatingPdf(64 * 1024 * 1024);
      expect(bomb.length).toBeLessThan(100 * 1024);

      const error = await refusal(read(reader, 'pdf', bomb));

      expect(error.failureCode).toBe('too_large');
      expect(error.message).toBe('The PDF could not be read: its content expands beyond 8 MB.');
      // A stream that inflates within the cap is read.
      const modest = await read(reader, 'pdf', await makeInflatingPdf(1024 * 1024));
      expect(modest.blocks).toEqual([{ kind: 'text', text: 'Hello', page: 1 }]);
    },
    HEAVY,
  );

  it(
    'fails a document with more characters of text than KNOWLEDGE_MAX_TEXT_CHARACTERS',
    async () => {
      const reader = readerWith({ KNOWLEDGE_MAX_TEXT_CHARACTERS: '100' });

      const text = await refusal(read(reader, 'text', utf8('word '.repeat(100))));
      const pdf = await refusal(
        read(reader, 'pdf', makePdf([Array.from({ length: 5 }, () => 'word '.repeat(10))])),
      );

      for (const error of [text, pdf]) {
        expect(error.failureCode).toBe('too_large');
        expect(error.message).toMatch(/holds more than 100 characters of text/);
      }
    },
    HEAVY,
  );

  it(
    'fails a document that needs more than KNOWLEDGE_READ_MEMORY_MB, and reads the next one in a new worker',
    async () => {
      const reader = readerWith({ KNOWLEDGE_READ_MEMORY_MB: '128' });
      // Tens of thousands of paragraphs of emphasis: marked's tokens of them outgrow 128 MB of heap.
      const heavy = `${'a *b* c '.repeat(8)}\n\n`.repeat(46_000);

      const error = await refusal(read(reader, 'markdown', utf8(heavy)));
      const next = await read(reader, 'markdown', utf8('# Next\n\nStill served.'));

      expect(error.failureCode).toBe('too_large');
      expect(error.message).toBe(
        'The document could not be read: it needs more than 128 MB of memory to read.',
      );
      expect(next.blocks).toEqual([
        { kind: 'heading', level: 1, text: 'Next' },
        { kind: 'text', text: 'Still served.' },
      ]);
    },
    HEAVY,
  );
});

describe('the reading workers: time', () => {
  it(
    'fails a PDF of nested forms once its own time is up, and reads the next document in a new worker',
    async () => {
      const reader = readerWith({ KNOWLEDGE_READ_TIMEOUT_MS: '1500', KNOWLEDGE_READ_WORKERS: '1' });
      // The worker starts before the budget is lowered to matter: its start is not the job's time.
      await read(reader, 'text', utf8('Warm.'));

      const error = await refusal(read(reader, 'pdf', makeNestedFormsPdf(12, 8)));
      const next = await read(reader, 'text', utf8('Served after.'));

      expect(error.failureCode).toBe('too_slow');
      expect(error.message).toBe('The document could not be read: it took longer than 1.5 seconds to read.');
      expect(next.blocks).toEqual([{ kind: 'text', text: 'Served after.' }]);
    },
    HEAVY,
  );

  it(
    'counts a queued document’s time from when a worker starts on it, not from when it was queued',
    async () => {
      const reader = readerWith({ KNOWLEDGE_READ_TIMEOUT_MS: '3000', KNOWLEDGE_READ_WORKERS: '1' });
      await read(reader, 'text', utf8('Warm.'));

      // One worker: the ordinary PDF waits the whole of the bomb's time, then has its own.
      const bomb = read(reader, 'pdf', makeNestedFormsPdf(12, 8), 'user_002');
      const ordinary = read(reader, 'pdf', makePdf([['An ordinary page.']]), 'user_002');

      expect((await refusal(bomb)).failureCode).toBe('too_slow');
      expect((await ordinary).blocks).toEqual([{ kind: 'text', text: 'An ordinary page.', page: 1 }]);
    },
    HEAVY,
  );

  it(
    'answers the serving thread’s timers while a document that blocked it is read',
    async () => {
      const reader = readerWith();
      await read(reader, 'text', utf8('Warm.'));
      const events: string[] = [];

      const reading = tracked(
        read(reader, 'markdown', utf8('_a'.repeat(1_000_000))),
        events,
        'document read',
      );
      await new Promise((resolve) => setTimeout(resolve, 1));
      events.push('timer');
      await reading;

      // Read on this thread, the document held it until it was done, and the timer came after it.
      expect(events).toEqual(['timer', 'document read']);
    },
    HEAVY,
  );
});

describe('the reading workers: fairness', () => {
  it(
    "reads user_001's small PDF while user_002's two bombs hold their workers",
    async () => {
      const reader = readerWith({ KNOWLEDGE_READ_TIMEOUT_MS: '20000', KNOWLEDGE_READ_WORKERS: '2' });
      await Promise.all([
        read(reader, 'text', utf8('Warm.'), 'warm-1'),
        read(reader, 'text', utf8('Warm.'), 'warm-2'),
      ]);
      const events: string[] = [];

      const bombs = [1, 2].map((n) =>
        tracked(refusal(read(reader, 'pdf', makeNestedFormsPdf(12, 8), 'user_002')), events, `bomb ${n}`),
      );
      const small = tracked(
        read(reader, 'pdf', makePdf([['Parental leave is sixteen weeks.']])),
        events,
        'small',
      );

      expect((await small).blocks).toEqual([
        { kind: 'text', text: 'Parental leave is sixteen weeks.', page: 1 },
      ]);
      expect(events).toEqual(['small']);
      for (const bomb of bombs) expect((await bomb).failureCode).toBe('too_slow');
    },
    HEAVY,
  );
});
