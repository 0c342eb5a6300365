// The documents the knowledge bench reads, made the same on every run: policy books in Markdown, manuals as PDFs
// (deterministic prose on a few topics, so a search has a right answer), and the hostile corpus.
import { makeInflatingPdf, makeNestedFormsPdf } from '../test/support/make-pdf-bombs.js';
import { makePdf } from '../test/support/make-pdf.js';

const PDF_PAGES = Number(process.env.PDF_PAGES ?? 40);
/** Markdown documents are made of sections of one chunk each (one paragraph under its heading); this many per document. */
export const SECTIONS_PER_DOCUMENT = 100;

export const TOPICS = (
  'parental leave|expense receipts|laptop encryption|visitor badges|travel booking|remote work|security keys|' +
  'annual review|sick days|pension plan|office parking|printer toner|password reset|conference budget|' +
  'onboarding checklist|code review|incident response|holiday calendar|training courses|meeting rooms'
).split('|');
export const FILLER = (
  'the policy applies to every employee and contractor working for the company in any country where it ' +
  'operates and describes what to do who to ask and how long each step takes before a manager approves it'
).split(' ');

/** A deterministic paragraph of about `words` words on a topic (the topic's words recur, as in a real section). */
function paragraph(topic: string, seed: number, words: number): string {
  let state = (seed + 1) * 2654435761;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    out.push(i % 9 === 0 ? topic : (FILLER[state % FILLER.length] as string));
  }
  return `${out.join(' ')}.`;
}

export function markdownDocument(index: number): string {
  const lines = [`# Policy book ${index}`, ''];
  for (let s = 0; s < SECTIONS_PER_DOCUMENT; s++) {
    const topic = TOPICS[(index * 7 + s) % TOPICS.length] as string;
    lines.push(`## ${topic} (${index}.${s})`, '', paragraph(topic, index * 1000 + s, 150), '');
  }
  return lines.join('\n');
}

/** A page is about 30 lines of 12 words (a dense page of prose). */
export function pdfDocument(index: number): Uint8Array {
  const pages = Array.from({ length: PDF_PAGES }, (_, p) => {
    const topic = TOPICS[(index + p) % TOPICS.length] as string;
    const text = paragraph(topic, index * 100 + p, 360).split(' ');
    const lines: string[] = [];
    for (let i = 0; i < text.length; i += 12) lines.push(text.slice(i, i + 12).join(' '));
    return lines;
  });
  return makePdf(pages, { title: `Manual ${index}` });
}
/** The hostile corpus: what each document is, and its bytes (built before anything is measured). */
export async function hostileCorpus(): Promise<
  { name: string; fileName: string; type: string; content: Uint8Array }[]
> {
  const megabyte = 1024 * 1024;
  const types = { md: 'text/markdown', html: 'text/html', pdf: 'application/pdf' } as const;
  const entry = (
    name: string,
    fileName: `${string}.${keyof typeof types}`,
    content: string | Uint8Array,
  ) => ({
    name,
    fileName,
    type: types[fileName.slice(fileName.lastIndexOf('.') + 1) as keyof typeof types],
    content: typeof content === 'string' ? new TextEncoder().encode(content) : content,
  });
  return [
    entry('Markdown `_a` x 30,000 (60 KB)', 'a.md', '_a'.repeat(30_000)),
    entry('Markdown `*a` x 100,000 (200 KB)', 'b.md', '*a'.repeat(100_000)),
    entry('Markdown `> ` x 50,000', 'c.md', `${'> '.repeat(50_000)}x`),
    entry('HTML `<td> </td>` x 40,000 (400 KB)', 'd.html', '<td> </td>'.repeat(40_000)),
    entry('HTML `<td>x</td>` x 40,000 (400 KB)', 'e.html', '<td>x</td>'.repeat(40_000)),
    entry('HTML 100,000 nested <div>s', 'f.html', `${'<div>'.repeat(100_000)}x`),
    entry('PDF inflating to 200 MB', 'g.pdf', await makeInflatingPdf(200 * megabyte)),
    entry('PDF inflating to 500 MB', 'h.pdf', await makeInflatingPdf(500 * megabyte)),
    entry('PDF of nested form XObjects (8^12 draws)', 'i.pdf', makeNestedFormsPdf(12, 8)),
  ];
}
