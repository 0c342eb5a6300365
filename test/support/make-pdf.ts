// A tiny writer of real PDFs for tests and benchmarks: pages of text lines in Helvetica (one of the 14 standard
// fonts) or a Japanese CID font, neither embedded, with a correct cross-reference table, so PDF readers open them as
// they would any.
const PAGE_WIDTH = 612;
const PAGE_HEIGHT = 792;
const MARGIN = 72;
const FONT_SIZE = 12;
const LEADING = 16;

export interface MakePdfOptions {
  /** The document's Title in its Info dictionary. */
  title?: string;
  /**
   * helvetica (the default): Latin-1 text. japanese: a CID font that is not embedded and is encoded with the
   * predefined CMap UniJIS-UCS2-H, as Japanese office documents often are; a reader needs that CMap to get at the
   * text, as it would for any such PDF.
   */
  font?: 'helvetica' | 'japanese';
}

const FONTS = {
  helvetica: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  japanese:
    '<< /Type /Font /Subtype /Type0 /BaseFont /KozMinPr6N-Regular /Encoding /UniJIS-UCS2-H /DescendantFonts ' +
    '[<< /Type /Font /Subtype /CIDFontType0 /BaseFont /KozMinPr6N-Regular ' +
    '/CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 6 >> ' +
    '/FontDescriptor << /Type /FontDescriptor /FontName /KozMinPr6N-Regular /Flags 4 /FontBBox [0 -120 1000 880] ' +
    '/ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >> >>] >>',
} as const;

/**
 * A PDF with one page per entry of `pages`, each a list of lines written top-down from the upper margin. An empty
 * line leaves a blank line (a paragraph break to a reader); lines past the bottom margin keep going down, off the
 * page, still as text. In Helvetica, characters outside Latin-1 are written as '?' (its WinAnsi encoding has no
 * others); in the Japanese font, characters outside the Basic Multilingual Plane are.
 */
export function makePdf(pages: readonly (readonly string[])[], options: MakePdfOptions = {}): Uint8Array {
  const objects: PdfObject[] = [];
  const add = (object: PdfObject): number => objects.push(object); // object numbers start at 1

  const catalog = add({ dictionary: '' });
  const pageTree = add({ dictionary: '' });
  const fontName = options.font ?? 'helvetica';
  const font = add({ dictionary: FONTS[fontName] });
  const info =
    options.title === undefined
      ? undefined
      : add({ dictionary: `<< /Title ${pdfTextString(options.title)} >>` });
  const pageRefs: number[] = [];
  for (const lines of pages) {
    const stream = contentStream(lines, fontName === 'japanese' ? ucs2Hex : escapedLiteral);
    const content = add({ dictionary: '<< >>', stream: Buffer.from(stream, 'latin1') });
    pageRefs.push(
      add({
        dictionary:
          `<< /Type /Page /Parent ${pageTree} 0 R /MediaBox [0 0 ${PAGE_WIDTH} ${PAGE_HEIGHT}] ` +
          `/Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`,
      }),
    );
  }
  objects[catalog - 1] = { dictionary: `<< /Type /Catalog /Pages ${pageTree} 0 R >>` };
  objects[pageTree - 1] = {
    dictionary: `<< /Type /Pages /Kids [${pageRefs.map((ref) => `${ref} 0 R`).join(' ')}] /Count ${pageRefs.length} >>`,
  };
  return writePdf(objects, info === undefined ? '' : `/Info ${info} 0 R`);
}

/** One PDF object: its dictionary and, for a stream object, the stream's (already encoded) bytes. */
export interface PdfObject {
  dictionary: string;
  stream?: Uint8Array;
}

/**
 * A PDF file of the given objects (numbered from 1, the first the catalog) with a correct cross-reference table.
 * A stream object's /Length is added to its dictionary; `trailer` adds entries to the trailer (/Info, /Encrypt).
 */
export function writePdf(objects: readonly PdfObject[], trailer = ''): Uint8Array {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n', 'latin1')];
  let offset = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(offset);
    const body =
      object.stream === undefined
        ? [Buffer.from(`${index + 1} 0 obj\n${object.dictionary}\nendobj\n`, 'latin1')]
        : [
            Buffer.from(
              `${index + 1} 0 obj\n${object.dictionary.replace(/\s*>>\s*$/, ` /Length ${object.stream.length} >>`)}\nstream\n`,
              'latin1',
            ),
            Buffer.from(object.stream),
            Buffer.from('\nendstream\nendobj\n', 'latin1'),
          ];
    for (const part of body) {
      parts.push(part);
      offset += part.length;
    }
  });
  const xref = [
    'xref',
    `0 ${objects.length + 1}`,
    '0000000000 65535 f ',
    ...offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n `),
  ].join('\n');
  const entries = trailer === '' ? '' : ` ${trailer}`;
  parts.push(
    Buffer.from(
      `${xref}\ntrailer\n<< /Size ${objects.length + 1} /Root 1 0 R${entries} >>\nstartxref\n${offset}\n%%EOF\n`,
      'latin1',
    ),
  );
  return new Uint8Array(Buffer.concat(parts));
}

function contentStream(lines: readonly string[], pdfString: (text: string) => string): string {
  const operators: string[] = [];
  lines.forEach((line, index) => {
    if (line === '') return;
    const y = PAGE_HEIGHT - MARGIN - index * LEADING;
    operators.push(`BT /F1 ${FONT_SIZE} Tf ${MARGIN} ${y} Td ${pdfString(line)} Tj ET`);
  });
  return operators.join('\n');
}

/** A literal string: backslash and parentheses escaped, characters WinAnsi does not share with Latin-1 as '?'. */
function escapedLiteral(text: string): string {
  let escaped = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '\\' || char === '(' || char === ')') escaped += `\\${char}`;
    else if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code > 0xff)
      escaped += code === 0x09 ? ' ' : '?';
    else if (code > 0x7e) escaped += `\\${code.toString(8).padStart(3, '0')}`;
    else escaped += char;
  }
  return `(${escaped})`;
}

/** A hex string of UTF-16 code units (what UCS2 CMaps map from); characters beyond them as a full-width '?'. */
function ucs2Hex(text: string): string {
  let hex = '';
  for (const char of text) {
    const code = char.length === 1 ? char.charCodeAt(0) : 0xff1f;
    hex += code.toString(16).padStart(4, '0').toUpperCase();
  }
  return `<${hex}>`;
}

/** A text string of the document's metadata: UTF-16BE with its byte-order mark, written in hex. */
function pdfTextString(text: string): string {
  let hex = 'FEFF';
  for (let index = 0; index < text.length; index += 1) {
    hex += text.charCodeAt(index).toString(16).padStart(4, '0').toUpperCase();
  }
  return `<${hex}>`;
}
