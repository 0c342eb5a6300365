// Pure decoding of embedding vectors as servers return them: base64 little-endian float32 (what the
// openai SDKs ask for) or a plain float array (servers that ignore `encoding_format`).

export function decodeEmbedding(value: unknown): number[] {
  if (Array.isArray(value) && value.every((item) => typeof item === 'number')) return value;
  if (typeof value === 'string') return decodeBase64Float32(value);
  throw new TypeError('An embedding is neither a float array nor a base64 string.');
}

export function decodeBase64Float32(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length % 4 !== 0) {
    throw new TypeError(
      `A base64 embedding has ${bytes.length} bytes, not a whole number of float32 values.`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const values = new Array<number>(bytes.length / 4);
  for (let i = 0; i < values.length; i++) values[i] = view.getFloat32(i * 4, true);
  return values;
}
