// Text extraction per format, on real inputs: a Markdown handbook and an intranet HTML page (test/fixtures/knowledge)
// and PDFs written by test/support/make-pdf.ts, read by pdf.js itself, in the reading workers as the app reads them.
import { readFileSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makePdf } from '../../test/support/make-pdf.js';

import type { DocumentFormat } from './contracts.js';
import { UnreadableDocumentError, type ExtractedDocument, type TextBlock } from './document-text.js';
import { createDocumentReader } from './extract-pool.js';
import { readingBudget } from './settings.js';

const reader = createDocumentReader(readingBudget());
afterAll(() => reader.close());
// A worker's start (under tsx the sources compiled, then pdf.js loaded) is no test's: it is done once, first.
beforeAll(() => reader.read({ format: 'pdf', content: makePdf([['Warm.']]), owner: 'warm-up' }), 120_000);

const extractDocument = (format: DocumentFormat, content: Uint8Array): Promise<ExtractedDocument> =>
  reader.read({ format, content, owner: 'user_001' });

const fixture = (name: string): Uint8Array =>
  readFileSync(new URL(`../../test/fixtures/knowledge/${name}`, import.meta.url));
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

const heading = (level: 1 | 2 | 3 | 4 | 5 | 6, text: string): TextBlock => ({ kind: 'heading', level, text });
const text = (value: string, page?: number): TextBlock =>
  page === undefined ? { kind: 'text', text: value } : { kind: 'text', text: value, page };

async function failure(promise: Promise<unknown>): Promise<UnreadableDocumentError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(UnreadableDocumentError);
  return error as UnreadableDocumentError;
}

describe('extractDocument: Markdown', () => {
  it('reads headings with their levels, paragraphs, list items, quotes, table rows and code as blocks', async () => {
    const document = await extractDocument('markdown', fixture('handbook.md'));

    expect(document.title).toBe('Employee Handbook');
    expect(document.pageCount).toBe(1);
    expect(document.blocks).toEqual([
      heading(1, 'Employee Handbook'),
      text('Welcome to Contoso. This handbook explains how we work & what you can expect from us.'),
      heading(2, 'Leave'),
      heading(3, 'Annual leave'),
      text(
        'Every employee gets 25 days of paid annual leave per calendar year. Unused days carry over until the end ' +
          'of March of the following year.',
      ),
      text('Ask your manager at least two weeks ahead. See the leave portal to book days.'),
      heading(3, 'Sick leave'),
      text('- Tell your manager before 10:00 on the first day.'),
      text("- From the fourth day, send a doctor's note."),
      text('- Part-time staff send it from the second day.'),
      text('- Nothing else is needed.'),
      text('Your health comes first: do not work while you are ill.'),
      heading(2, 'Expenses'),
      text('1. Keep every receipt.'),
      text('2. Submit claims within 30 days.'),
      text("3. Claims above 500 EUR need a director's approval."),
      text('Item | Limit per day'),
      text('Hotel | 180 EUR'),
      text('Meals | 45 EUR'),
      heading(2, 'Tools'),
      text('Reset your VPN profile with:'),
      text('contoso-vpn reset --profile office\ncontoso-vpn connect'),
      text('Older laptops'),
      text('Laptops bought before 2020 use the legacy client.'),
    ]);
  });

  it('reduces inline markup to its text: emphasis, code spans, links, images, escapes and entities', async () => {
    const document = await extractDocument(
      'markdown',
      utf8(
        'A *b* __c__ ~~d~~ `e < f && g` [link text](https://x.example) ![a diagram](d.png) \\*star\\* ' +
          '&copy; &#x41; 1 < 2 <span>inline</span>  \nnext line',
      ),
    );

    expect(document.blocks).toEqual([
      text('A b c d e < f && g link text a diagram *star* © A 1 < 2 inline next line'),
    ]);
  });

  it('keeps code blocks line by line with their indentation', async () => {
    const document = await extractDocument('markdown', utf8('```py\ndef f():\n    return 1   \n```\n'));

    expect(document.blocks).toEqual([text('def f():\n    return 1')]);
  });

  it("takes the title from front matter, which is not read as the document's text", async () => {
    const document = await extractDocument(
      'markdown',
      utf8('---\ntitle: "Onboarding Guide"\nowner: hr\n---\n# Welcome\n\nFirst day.\n'),
    );

    expect(document.title).toBe('Onboarding Guide');
    expect(document.blocks).toEqual([heading(1, 'Welcome'), text('First day.')]);
  });

  it('keeps the text of a document that starts with a rule, which is not front matter', async () => {
    const document = await extractDocument('markdown', utf8('---\n\nIntro.\n\n---\n\nMore.\n'));

    expect(document.blocks).toEqual([text('Intro.'), text('More.')]);
  });

  it('gives no title when there is no level-1 heading', async () => {
    const document = await extractDocument('markdown', utf8('## Section\n\nBody.\n'));

    expect(document.title).toBeUndefined();
    expect(document.blocks).toEqual([heading(2, 'Section'), text('Body.')]);
  });

  it('reads Windows line endings and setext headings', async () => {
    const document = await extractDocument('markdown', utf8('Title\r\n=====\r\n\r\nOne\r\ntwo.\r\n'));

    expect(document.blocks).toEqual([heading(1, 'Title'), text('One two.')]);
  });
});

describe('extractDocument: plain text', () => {
  it('makes a paragraph of each run of lines between blank lines, with no headings and no title', async () => {
    const document = await extractDocument(
      'text',
      utf8('\uFEFFFirst line\r\nwraps here.\r\n\r\n  \r\nSecond\tparagraph.\n\n\n'),
    );

    expect(document).toEqual({
      pageCount: 1,
      blocks: [text('First line wraps here.'), text('Second paragraph.')],
    });
  });

  it('drops control characters', async () => {
    const document = await extractDocument('text', utf8('a\u0000b\u0007c'));

    expect(document.blocks).toEqual([text('a b c')]);
  });

  it('drops bidirectional controls, which would reorder a passage for everyone it is shown to', async () => {
    const markdown = await extractDocument(
      'markdown',
      utf8('# Pay\u202Eroll\n\nSend to \u2066evil\u2069 \u202Atoday.'),
    );
    const plain = await extractDocument('text', utf8('invoice\u202Efdp.exe'));

    expect(markdown.blocks).toEqual([heading(1, 'Payroll'), text('Send to evil today.')]);
    expect(plain.blocks).toEqual([text('invoicefdp.exe')]);
  });
});

describe('extractDocument: HTML', () => {
  it('reads headings and blocks; skips scripts, styles, navigation, hidden parts and controls', async () => {
    const document = await extractDocument('html', fixture('intranet-page.html'));

    expect(document.title).toBe('Travel Policy – Contoso Intranet');
    expect(document.blocks).toEqual([
      heading(1, 'Travel Policy'),
      text('Book trains for journeys under four hours; flights need approval & a business reason.'),
      heading(2, 'Booking'),
      text('3. Use the travel portal.'),
      text('4. Choose the cheapest refundable fare.'),
      text('- Keep the confirmation email.'),
      heading(3, 'Allowances'),
      text('Country | Per diem'),
      text('France | €60'),
      text('  portal: travel.contoso.example\n  phone:  +1 555 0100'),
      text('Updated 2024-05-01'),
    ]);
  });

  it('falls back to the first level-1 heading for the title, and reads a fragment without <html>', async () => {
    const document = await extractDocument(
      'html',
      utf8('<h1>Security&nbsp;Basics</h1>Lock your screen.<br>Always.'),
    );

    expect(document.title).toBe('Security Basics');
    expect(document.blocks).toEqual([heading(1, 'Security Basics'), text('Lock your screen. Always.')]);
  });
});

describe('extractDocument: PDF', () => {
  it('reads each page’s lines as paragraphs with their page, the Title and the page count', async () => {
    const pdf = makePdf(
      [
        [
          'Annual leave is 25 days per year.',
          'Unused days carry over until March.',
          '',
          'Sick leave needs a note.',
        ],
        [],
        ['Expenses are paid monthly (by transfer).', 'A back\\slash and café stay as written.'],
      ],
      { title: 'Employee Handbook – 2024' },
    );

    const document = await extractDocument('pdf', pdf);

    expect(document).toEqual({
      title: 'Employee Handbook – 2024',
      pageCount: 3,
      blocks: [
        text('Annual leave is 25 days per year. Unused days carry over until March.', 1),
        text('Sick leave needs a note.', 1),
        text('Expenses are paid monthly (by transfer). A back\\slash and café stay as written.', 3),
      ],
    });
  });

  it('joins a line broken after a hyphen without a space, and gives no title when the PDF has none', async () => {
    const document = await extractDocument('pdf', makePdf([['A well-', 'known rule.']]));

    expect(document.title).toBeUndefined();
    expect(document.blocks).toEqual([text('A well-known rule.', 1)]);
  });

  it('reads many pages in order', async () => {
    const pages = Array.from({ length: 40 }, (_, page) => [`This is page ${page + 1}.`]);

    const document = await extractDocument('pdf', makePdf(pages));

    expect(document.pageCount).toBe(40);
    expect(document.blocks).toEqual(pages.map((lines, page) => text(lines[0]!, page + 1)));
  });

  it('reads text in a font that is not embedded and needs a predefined CMap (CJK office documents)', async () => {
    const pdf = makePdf([['年次休暇は二十五日です。', '申請は二週間前までに。']], { font: 'japanese' });

    const document = await extractDocument('pdf', pdf);

    expect(document.blocks).toEqual([text('年次休暇は二十五日です。申請は二週間前までに。', 1)]);
  });

  it("reads PDFs in a worker thread: pdf.js's polyfills never replace this thread's built-ins", async () => {
    const { stringify, parse } = JSON;
    const { push } = Array.prototype;
    await extractDocument('pdf', makePdf([['Some text.']]));
    expect(JSON.stringify).toBe(stringify);
    expect(JSON.parse).toBe(parse);
    expect(Array.prototype.push).toBe(push);
  });

  it('leaves the caller’s bytes as they were (pdf.js takes over the buffer it is given)', async () => {
    const pdf = makePdf([['Some text.']]);
    const copy = pdf.slice();

    await extractDocument('pdf', pdf);
    await extractDocument('pdf', Buffer.from(pdf));

    expect(pdf).toEqual(copy);
  });

  it('fails as unreadable when the content is not a PDF, is cut short or is protected by a password', async () => {
    const garbage = await failure(extractDocument('pdf', utf8('%PDF-1.4 garbage')));
    expect(garbage.failureCode).toBe('unreadable');
    expect(garbage.code).toBe('document_unreadable');
    expect(garbage.message).toMatch(/^The PDF could not be read: \S/);

    const whole = makePdf([['First page.'], ['Second page.']]);
    const truncated = await failure(extractDocument('pdf', whole.slice(0, Math.floor(whole.length * 0.6))));
    expect(truncated.failureCode).toBe('unreadable');

    const locked = await failure(extractDocument('pdf', withPassword(makePdf([['Secret.']]))));
    expect(locked.failureCode).toBe('unreadable');
    expect(locked.message).toBe('The PDF could not be read: it is protected by a password.');

    const nothing = await failure(extractDocument('pdf', new Uint8Array(0)));
    expect(nothing.failureCode).toBe('unreadable');
  });

  it('fails as empty when no page has text (a scan)', async () => {
    const error = await failure(extractDocument('pdf', makePdf([[], []])));

    expect(error.failureCode).toBe('empty');
    expect(error.code).toBe('document_empty');
    expect(error.message).toMatch(/no text/);
  });
});

describe('extractDocument: unreadable and empty text formats', () => {
  it('fails as unreadable when a text format is not UTF-8', async () => {
    for (const format of ['markdown', 'text', 'html'] as const) {
      const error = await failure(extractDocument(format, new Uint8Array([0x48, 0x69, 0xff, 0xfe, 0x21])));
      expect(error.failureCode).toBe('unreadable');
      expect(error.message).toMatch(/not valid UTF-8/);
    }
  });

  it('fails as empty when there is no text, or only headings', async () => {
    const cases = [
      ['text', ' \n\n\t '],
      ['markdown', '# Only a heading\n\n---\n\n[ref]: https://x.example\n'],
      ['html', '<html><head><title>T</title><script>x()</script></head><body><nav>Menu</nav></body></html>'],
      ['html', '<h1>Title</h1><!-- a comment -->'],
    ] as const;
    for (const [format, content] of cases) {
      const error = await failure(extractDocument(format, utf8(content)));
      expect(error.failureCode, `${format}: ${content}`).toBe('empty');
      expect(error.message).toBe('The document has no text to index.');
    }
  });
});

describe('makePdf (the PDFs these tests read)', () => {
  // pdf.js rebuilds a broken cross-reference table without a word, so the table is checked here byte by byte.
  it('writes a cross-reference table whose offsets point at their objects', () => {
    const source = Buffer.from(makePdf([['One (1)'], ['Two', '', 'Three é']], { title: 'T' })).toString(
      'latin1',
    );

    const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(source)?.[1]);
    expect(source.startsWith('xref\n', startxref)).toBe(true);
    const entries = [...source.slice(startxref).matchAll(/^(\d{10}) 00000 n $/gm)].map((match) =>
      Number(match[1]),
    );
    expect(entries).toHaveLength(8); // catalog, pages, font, info, and a content stream and a page per page
    entries.forEach((offset, index) => expect(source.startsWith(`${index + 1} 0 obj\n`, offset)).toBe(true));
    for (const match of source.matchAll(/<< \/Length (\d+) >>\nstream\n/g)) {
      const start = match.index + match[0].length;
      expect(source.slice(start + Number(match[1]))).toMatch(/^\nendstream\n/);
    }
  });
});

/**
 * The PDF with a standard security handler whose user password is not empty: readers must ask for it (pdf.js
 * computes the key for the empty password, which does not match /U). Only the trailer changes, after the
 * cross-reference table, so every offset stays right.
 */
function withPassword(pdf: Uint8Array): Uint8Array {
  const source = Buffer.from(pdf).toString('latin1');
  const bytes32 = 'A5'.repeat(32);
  const encrypted = source.replace(
    '/Root 1 0 R',
    `/Root 1 0 R /Encrypt << /Filter /Standard /V 1 /R 2 /O <${bytes32}> /U <${bytes32}> /P -44 >> ` +
      '/ID [<00112233445566778899AABBCCDDEEFF> <00112233445566778899AABBCCDDEEFF>]',
  );
  return new Uint8Array(Buffer.from(encrypted, 'latin1'));
}
