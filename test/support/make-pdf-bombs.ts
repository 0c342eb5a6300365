// PDFs that are small on disk and ruinous to read, built for tests and benchmarks: one whose content stream
// inflates (FlateDecode) to a given size of zeros, and one of nested form XObjects, each drawing the next level
// several times, whose pages paint text exponentially many times. Both are well-formed, with a correct xref table.
import { constants, createDeflate } from 'node:zlib';
import { type PdfObject, writePdf } from './make-pdf.js';

/** The zlib (FlateDecode) compression of `prefix` then `size` zero bytes, made a megabyte at a time. */
export async function deflatedZeros(size: number, prefix = Buffer.alloc(0)): Promise<Buffer> {
  const deflate = createDeflate({ level: constants.Z_BEST_COMPRESSION });
  deflate.write(prefix);
  const chunks: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    deflate.on('end', resolve);
    deflate.on('error', reject);
  });
  const block = Buffer.alloc(Math.min(size, 1024 * 1024));
  for (let written = 0; written < size; written += block.length) {
    const part = block.subarray(0, Math.min(block.length, size - written));
    if (!deflate.write(part)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await done;
  return Buffer.concat(chunks);
}

/** A one-page PDF with a line of text, whose content stream then inflates to `inflatedBytes` of zeros. */
export async function makeInflatingPdf(inflatedBytes: number): Promise<Uint8Array> {
  const text = Buffer.from('BT /F1 12 Tf 72 720 Td (Hello) Tj ET\n', 'latin1');
  // The text, then the zeros: whitespace to a PDF reader, which reads on through them.
  const content = await deflatedZeros(inflatedBytes, text);
  return writePdf([
    { dictionary: '<< /Type /Catalog /Pages 2 0 R >>' },
    { dictionary: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' },
    {
      dictionary:
        '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    },
    { dictionary: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>' },
    { dictionary: '<< /Filter /FlateDecode >>', stream: content },
  ]);
}

/**
 * A one-page PDF whose page draws form X1 `fanout` times, X1 draws X2 `fanout` times, and so on `depth` levels
 * down to a form that writes one word: fanout^depth words from a file of a few kilobytes.
 */
export function makeNestedFormsPdf(depth: number, fanout: number): Uint8Array {
  const firstForm = 5; // object number of X1
  const draws = (level: number) => Array.from({ length: fanout }, () => `q /X${level} Do Q`).join('\n');
  const forms: PdfObject[] = [];
  for (let level = 1; level <= depth; level += 1) {
    const body = level === depth ? 'BT /F1 12 Tf 72 720 Td (word) Tj ET' : draws(level + 1);
    const next = level === depth ? '' : `/XObject << /X${level + 1} ${firstForm + level} 0 R >>`;
    forms.push({
      dictionary: `<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> ${next} >> >>`,
      stream: Buffer.from(body, 'latin1'),
    });
  }
  return writePdf([
    { dictionary: '<< /Type /Catalog /Pages 2 0 R >>' },
    { dictionary: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' },
    {
      dictionary: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> /XObject << /X1 ${firstForm} 0 R >> >> /Contents ${firstForm + depth} 0 R >>`,
    },
    { dictionary: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>' },
    ...forms,
    { dictionary: '<< >>', stream: Buffer.from(draws(1), 'latin1') },
  ]);
}
