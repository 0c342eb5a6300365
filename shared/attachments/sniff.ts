// What a file is, read from its bytes alone (the name and the declared type are the client's word): the image
// formats by their signatures, with their dimensions from the header (nothing is decoded), PDF, and text.
/** A file's type as sniffed, with an image's dimensions from its header. */
export interface Sniffed {
  mediaType: string;
  width?: number;
  height?: number;
}

const TEXT_TYPES = new Set(['text/plain', 'text/markdown', 'text/csv', 'application/json']);

/**
 * The type of `bytes`; `declared` only chooses among text types (a `.csv` stays CSV), never makes text of an image
 * or an image of text. Markup a browser would run (HTML, SVG, XML) is named as such, so a list without it refuses it.
 */
export function sniffType(bytes: Uint8Array, declared?: string): Sniffed {
  const image = sniffImage(bytes);
  if (image !== undefined) return image;
  if (startsWith(bytes, [0x25, 0x50, 0x44, 0x46, 0x2d])) return { mediaType: 'application/pdf' };
  const text = decodeText(bytes);
  if (text === undefined) return { mediaType: 'application/octet-stream' };
  const head = text
    .slice(0, 512)
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (/^<(!doctype html|html|head|body|script|iframe|meta|!--)/.test(head) || /<script[\s>]/.test(head))
    return { mediaType: 'text/html' };
  if (/^<svg[\s>]/.test(head) || /^<\?xml/.test(head)) return { mediaType: 'image/svg+xml' };
  const wanted = declared?.split(';')[0]?.trim().toLowerCase();
  if (wanted !== undefined && TEXT_TYPES.has(wanted)) return { mediaType: wanted };
  if (wanted !== undefined && wanted.startsWith('text/') && wanted !== 'text/html')
    return { mediaType: 'text/plain' };
  return { mediaType: 'text/plain' };
}

/** An image's type and its dimensions from the header; undefined when the bytes are not a known image. */
export function sniffImage(bytes: Uint8Array): Sniffed | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) {
    // The IHDR chunk comes first: width and height are its first two 32-bit fields.
    if (bytes.length < 24) return { mediaType: 'image/png' };
    return { mediaType: 'image/png', width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) {
    if (bytes.length < 10) return { mediaType: 'image/gif' };
    return { mediaType: 'image/gif', width: view.getUint16(6, true), height: view.getUint16(8, true) };
  }
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { mediaType: 'image/jpeg', ...jpegSize(bytes, view) };
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP')
    return { mediaType: 'image/webp', ...webpSize(bytes, view) };
  return undefined;
}

/** The first start-of-frame marker's dimensions. */
function jpegSize(bytes: Uint8Array, view: DataView): { width?: number; height?: number } {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return {};
    const marker = bytes[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    const length = view.getUint16(at + 2);
    // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
    at += 2 + length;
  }
  return {};
}

function webpSize(bytes: Uint8Array, view: DataView): { width?: number; height?: number } {
  if (bytes.length < 30) return {};
  const chunk = ascii(bytes, 12, 4);
  if (chunk === 'VP8 ')
    return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = view.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') {
    const width = 1 + ((bytes[24] ?? 0) | ((bytes[25] ?? 0) << 8) | ((bytes[26] ?? 0) << 16));
    const height = 1 + ((bytes[27] ?? 0) | ((bytes[28] ?? 0) << 8) | ((bytes[29] ?? 0) << 16));
    return { width, height };
  }
  return {};
}

/** UTF-8 text without NUL or other binary control characters; undefined otherwise. */
function decodeText(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u0008\u000e-\u001a\u001c-\u001f]/.test(text) ? undefined : text;
}

function startsWith(bytes: Uint8Array, signature: readonly number[]): boolean {
  return signature.every((byte, index) => bytes[index] === byte);
}

function ascii(bytes: Uint8Array, from: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(from, from + length));
}
