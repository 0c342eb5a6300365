// A tar archive (POSIX ustar) written as a stream of blocks: one 512-byte header per file, its bytes padded to
// 512, two empty blocks at the end. What `tar`, 7-Zip and every archive tool reads; gzip it for a .tar.gz.

export interface ArchiveEntry {
  /** A relative path with `/` separators, at most 255 bytes (ustar's name and prefix fields). */
  name: string;
  bytes: Uint8Array;
  modified?: Date;
}

const BLOCK = 512;

/** The archive's blocks, entry by entry: only one entry is held at a time. */
export async function* tarBlocks(entries: AsyncIterable<ArchiveEntry>): AsyncGenerator<Buffer> {
  for await (const entry of entries) {
    yield header(entry);
    yield Buffer.from(entry.bytes.buffer, entry.bytes.byteOffset, entry.bytes.byteLength);
    const pad = (BLOCK - (entry.bytes.byteLength % BLOCK)) % BLOCK;
    if (pad > 0) yield Buffer.alloc(pad);
  }
  yield Buffer.alloc(BLOCK * 2);
}

function header(entry: ArchiveEntry): Buffer {
  const { name, prefix } = splitName(entry.name);
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, 'utf8');
  octal(block, 100, 8, 0o644); // mode
  octal(block, 108, 8, 0); // uid
  octal(block, 116, 8, 0); // gid
  octal(block, 124, 12, entry.bytes.byteLength);
  octal(block, 136, 12, Math.floor((entry.modified ?? new Date(0)).getTime() / 1000));
  block.fill(0x20, 148, 156); // the checksum counts its own field as spaces
  block.write('0', 156, 1, 'ascii'); // a regular file
  block.write('ustar\u000000', 257, 8, 'binary');
  block.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'ascii');
  return block;
}

/** ustar keeps a path in a 100-byte name and a 155-byte prefix, split at a `/`. */
function splitName(path: string): { name: string; prefix: string } {
  if (path.length === 0 || path.startsWith('/') || path.split('/').includes('..'))
    throw new Error(`Not a relative archive path: ${path}`);
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  for (let at = path.indexOf('/'); at > 0; at = path.indexOf('/', at + 1)) {
    const prefix = path.slice(0, at);
    const name = path.slice(at + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { name, prefix };
  }
  throw new Error(`An archive path too long for ustar: ${path}`);
}

function octal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\u0000`, offset, length, 'ascii');
}
