// UTF-8 length of a string without encoding it: the page shares the modules that count (no Buffer there), and a
// call into Buffer per sentence costs more than the sentence.

/** UTF-8 bytes of `text`, as Buffer.byteLength counts them (a lone surrogate becomes U+FFFD, 3 bytes). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1))) {
      // A surrogate pair is one code point of four bytes.
      bytes += 4;
      index += 1;
    } else bytes += 3;
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
