// A tiny writer of real PDFs for tests and benchmarks: pages of text lines in Helvetica (one of the 14 standard
// fonts, so no font is embedded), with a correct cross-reference table, so PDF readers open them as they would any.
const PAGE_WIDTH = 612;
const PAGE_HEIGHT = 792;
const MARGIN = 72;
const FONT_SIZE = 12;
const LEADING = 16;

export interface MakePdfOptions {
  /** The document's Title in its Info dictionary. */
  title?: string;
}

/**
 * A PDF with one page per entry of `pages`, each a list of lines written top-down from the upper margin. An empty
 * line leaves a blank line (a paragraph break to a reader); lines past the bottom margin keep going down, off the
 * page, still as text. Characters outside Latin-1 are written as '?' (Helvetica's WinAnsi encoding has no others).
 */
export function makePdf(pages: readonly (readonly string[])[], options: MakePdfOptions = {}): Uint8Array {
  const objects: string[] = [];
  const add = (body: string): number => objects.push(body); // object numbers start at 1

  const catalog = add('');
  const pageTree = add('');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const info = options.title === undefined ? undefined : add(`<< /Title ${pdfTextString(options.title)} >>`);
  const pageRefs: number[] = [];
  for (const lines of pages) {
    const stream = contentStream(lines);
    const content = add(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`);
    pageRefs.push(
      add(
        `<< /Type /Page /Parent ${pageTree} 0 R /MediaBox [0 0 ${PAGE_WIDTH} ${PAGE_HEIGHT}] ` +
          `/Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`,
      ),
    );
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pageTree} 0 R >>`;
  objects[pageTree - 1] =
    `<< /Type /Pages /Kids [${pageRefs.map((ref) => `${ref} 0 R`).join(' ')}] /Count ${pageRefs.length} >>`;

  // Every character written is a single byte (Latin-1), so string lengths are byte offsets.
  const parts: string[] = ['%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n'];
  let offset = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    const object = `${index + 1} 0 obj\n${body}\nendobj\n`;
    offsets.push(offset);
    parts.push(object);
    offset += object.length;
  });
  const xref = [
    'xref',
    `0 ${objects.length + 1}`,
    '0000000000 65535 f ',
    ...offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n `),
  ].join('\n');
  const trailer =
    `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R` +
    `${info === undefined ? '' : ` /Info ${info} 0 R`} >>\nstartxref\n${offset}\n%%EOF\n`;
  parts.push(`${xref}\n${trailer}`);
  return new Uint8Array(Buffer.from(parts.join(''), 'latin1'));
}

function contentStream(lines: readonly string[]): string {
  const operators: string[] = [];
  lines.forEach((line, index) => {
    if (line === '') return;
    const y = PAGE_HEIGHT - MARGIN - index * LEADING;
    operators.push(`BT /F1 ${FONT_SIZE} Tf ${MARGIN} ${y} Td (${escapeLiteral(line)}) Tj ET`);
  });
  return operators.join('\n');
}

/** A literal string's content: backslash, parentheses and line breaks escaped, characters WinAnsi does not share with Latin-1 as '?'. */
function escapeLiteral(text: string): string {
  let escaped = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '\\' || char === '(' || char === ')') escaped += `\\${char}`;
    else if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code > 0xff)
      escaped += code === 0x09 ? ' ' : '?';
    else if (code > 0x7e) escaped += `\\${code.toString(8).padStart(3, '0')}`;
    else escaped += char;
  }
  return escaped;
}

/** A text string of the document's metadata: UTF-16BE with its byte-order mark, written in hex. */
function pdfTextString(text: string): string {
  let hex = 'FEFF';
  for (let index = 0; index < text.length; index += 1) {
    hex += text.charCodeAt(index).toString(16).padStart(4, '0').toUpperCase();
  }
  return `<${hex}>`;
}
