// Hostile document bytes for the hostile-input suite, built in code so the corpus is the same on every run: PDFs
// whose streams inflate far beyond their size, nested form XObjects, an encrypted and a truncated PDF, a zip bomb,
// an entity bomb, and the Markdown and HTML shapes that make naive parsers quadratic or recurse without end.
import { constants, crc32, deflateRawSync, deflateSync } from 'node:zlib';
import { type PdfObject, writePdf } from './make-pdf.js';
import { SeededRandom } from './seeded-random.js';

const PAGE = '/Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]';
const FONT = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';

/** A one-page PDF whose page shows `text` (a content stream of its own, not encoded). */
function onePagePdf(text: string, trailer = ''): Uint8Array {
  return writePdf(
    [
      { dictionary: '<< /Type /Catalog /Pages 2 0 R >>' },
      { dictionary: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' },
      { dictionary: `<< ${PAGE} /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>` },
      { dictionary: FONT },
      { dictionary: '<< >>', stream: Buffer.from(`BT /F1 12 Tf 72 700 Td (${text}) Tj ET`, 'latin1') },
    ],
    trailer,
  );
}

const MIB = 1024 * 1024;

/**
 * `mebibytes` MiB of zeros, deflated (zlib's format, as FlateDecode reads it, or raw, as in a zip) in no time: one
 * MiB compressed once and flushed to a byte boundary decodes to zeros wherever it is repeated (its matches copy the
 * zeros before them), so it is repeated, then closed with an empty final block.
 */
export function deflatedZeros(mebibytes: number, raw = false): Buffer {
  const unit = deflateRawSync(Buffer.alloc(MIB), { level: 9, finishFlush: constants.Z_SYNC_FLUSH });
  const finalBlock = Buffer.from([0x03, 0x00]);
  const blocks = Buffer.concat([...Array.from({ length: mebibytes }, () => unit), finalBlock]);
  if (raw) return blocks;
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((((mebibytes * MIB) % 65521) << 16) | 1) >>> 0);
  return Buffer.concat([Buffer.from([0x78, 0xda]), blocks, adler]);
}

/** A page whose content stream is `inflatedMebibytes` MiB of zeros behind FlateDecode (once, or twice over). */
export function flateBombPdf(inflatedMebibytes: number, layers: 1 | 2 = 1): Uint8Array {
  let stream = deflatedZeros(inflatedMebibytes);
  // The second layer compresses the first's output, small enough to compress at once.
  if (layers === 2) stream = deflateSync(stream, { level: 9 });
  const filter = layers === 2 ? '[/FlateDecode /FlateDecode]' : '/FlateDecode';
  return writePdf([
    { dictionary: '<< /Type /Catalog /Pages 2 0 R >>' },
    { dictionary: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' },
    { dictionary: `<< ${PAGE} /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>` },
    { dictionary: FONT },
    { dictionary: `<< /Filter ${filter} >>`, stream },
  ]);
}

/**
 * Form XObjects nested `depth` deep, each drawing the next one twice: the page draws 2^depth copies of one word,
 * from a file of a few kilobytes.
 */
export function nestedXObjectPdf(depth: number): Uint8Array {
  // 1 catalog, 2 pages, 3 page, 4 font, 5.. the forms: form i draws form i+1 twice; the last one shows text.
  const firstForm = 5;
  const objects: PdfObject[] = [
    { dictionary: '<< /Type /Catalog /Pages 2 0 R >>' },
    { dictionary: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' },
    {
      dictionary: `<< ${PAGE} /Resources << /XObject << /X ${firstForm} 0 R >> >> /Contents ${firstForm + depth} 0 R >>`,
    },
    { dictionary: FONT },
  ];
  for (let level = 0; level < depth; level += 1) {
    const last = level === depth - 1;
    const resources = last
      ? '/Resources << /Font << /F1 4 0 R >> >>'
      : `/Resources << /XObject << /X ${firstForm + level + 1} 0 R >> >>`;
    const content = last ? 'BT /F1 12 Tf 72 700 Td (nested) Tj ET' : 'q /X Do Q q /X Do Q';
    objects.push({
      dictionary: `<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] ${resources} >>`,
      stream: Buffer.from(content, 'latin1'),
    });
  }
  objects.push({ dictionary: '<< >>', stream: Buffer.from('/X Do', 'latin1') });
  return writePdf(objects);
}

/** A PDF under the standard security handler (RC4, a user password nobody was told). */
export function encryptedPdf(): Uint8Array {
  const hex = (seed: number) => {
    const random = new SeededRandom(seed);
    return Array.from({ length: 32 }, () => random.int(0, 255).toString(16).padStart(2, '0')).join('');
  };
  return writePdf(
    [
      { dictionary: '<< /Type /Catalog /Pages 2 0 R >>' },
      { dictionary: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' },
      { dictionary: `<< ${PAGE} /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>` },
      { dictionary: FONT },
      { dictionary: '<< >>', stream: Buffer.from('BT /F1 12 Tf 72 700 Td (secret) Tj ET', 'latin1') },
      { dictionary: `<< /Filter /Standard /V 1 /R 2 /O <${hex(1)}> /U <${hex(2)}> /P -44 >>` },
    ],
    '/Encrypt 6 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]',
  );
}

/** A readable one-page PDF cut off inside its page's content: no cross-reference table, no trailer. */
export function truncatedPdf(): Uint8Array {
  const whole = onePagePdf('This document was cut off before its cross-reference table');
  const cut = Buffer.from(whole).indexOf('Tj ET');
  return whole.subarray(0, cut);
}

/** A PDF header followed by seeded noise. */
export function malformedPdf(): Uint8Array {
  const random = new SeededRandom(2026);
  const noise = Buffer.alloc(64 * 1024);
  for (let index = 0; index < noise.length; index += 1) noise[index] = random.int(0, 255);
  return new Uint8Array(
    Buffer.concat([Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R', 'latin1'), noise]),
  );
}

/** A page tree whose only kid is the tree itself. */
export function cyclicPagesPdf(): Uint8Array {
  return writePdf([
    { dictionary: '<< /Type /Catalog /Pages 2 0 R >>' },
    { dictionary: '<< /Type /Pages /Kids [2 0 R] /Count 1 >>' },
  ]);
}

/** A zip archive with one file, `name`, of `inflatedMebibytes` MiB of zeros (deflated): a zip bomb of one layer. */
export function zipBomb(name: string, inflatedMebibytes: number): Uint8Array {
  const inflatedBytes = inflatedMebibytes * MIB;
  const data = deflatedZeros(inflatedMebibytes, true);
  const fileName = Buffer.from(name, 'utf8');
  const crc = crc32ZerosOf(inflatedBytes);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4); // version needed
  local.writeUInt16LE(0, 6); // flags
  local.writeUInt16LE(8, 8); // deflate
  local.writeUInt32LE(0, 10); // time and date
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(inflatedBytes, 22);
  local.writeUInt16LE(fileName.length, 26);
  local.writeUInt16LE(0, 28);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(0, 8);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(0, 12);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(inflatedBytes, 24);
  central.writeUInt16LE(fileName.length, 28);
  central.writeUInt32LE(0, 42); // the local header's offset
  const centralOffset = local.length + fileName.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + fileName.length, 12);
  end.writeUInt32LE(centralOffset, 16);
  return new Uint8Array(Buffer.concat([local, fileName, data, central, fileName, end]));
}

function crc32ZerosOf(bytes: number): number {
  const block = Buffer.alloc(MIB);
  let crc = 0;
  for (let done = 0; done < bytes; done += block.length)
    crc = crc32(bytes - done >= block.length ? block : block.subarray(0, bytes - done), crc);
  return crc;
}

/** "Billion laughs": ten entities each ten times the one before, declared in an HTML document's DOCTYPE. */
export function entityBombHtml(): string {
  const entities = ['<!ENTITY lol0 "lol">'];
  for (let level = 1; level <= 9; level += 1)
    entities.push(`<!ENTITY lol${level} "${`&lol${level - 1};`.repeat(10)}">`);
  return (
    `<!DOCTYPE html [\n${entities.join('\n')}\n]>\n` +
    '<html><head><title>Laughs</title></head><body><p>&lol9;</p><p>A short paragraph of real text.</p></body></html>'
  );
}
