// Caps the bytes pdf.js's stream decoders may hold while the reading worker reads one PDF: a small PDF whose
// content stream inflates to gigabytes would otherwise fill memory that no heap limit sees (decoded bytes live in
// ArrayBuffers, outside the JavaScript heap). Installed once per reading worker, never on the serving thread.
import { UnreadableDocumentError, megabytes } from './document-text.js';

/** Allocations below this size are not checked: a decoder's buffer only matters once it has grown. */
const CHECKED_BYTES = 1024 * 1024;

interface Guard {
  /** The ArrayBuffer bytes the worker held when the PDF's reading began (its own bytes, pdf.js's copy). */
  baseline: number;
  maxBytes: number;
  exceeded: boolean;
}

let guard: Guard | undefined;
let installed = false;

/**
 * Counts, at each large Uint8Array pdf.js allocates (its decoders grow their buffer by doubling), the ArrayBuffer
 * bytes this thread holds, and refuses the allocation once they would pass the PDF's limit. The native
 * DecompressionStream is removed so that pdf.js inflates through those same buffers (it falls back by itself).
 */
function install(): void {
  if (installed) return;
  installed = true;
  const native = globalThis.Uint8Array;
  const counted = new Proxy(native, {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- the trap's signature, as lib.d.ts types it
    construct(target, args: unknown[], newTarget: Function) {
      const [length] = args;
      if (guard !== undefined && typeof length === 'number' && length >= CHECKED_BYTES) check(guard, length);
      return Reflect.construct(target, args, newTarget) as object;
    },
  });
  Object.defineProperty(globalThis, 'Uint8Array', { value: counted, writable: true, configurable: true });
  Object.defineProperty(globalThis, 'DecompressionStream', {
    value: undefined,
    writable: true,
    configurable: true,
  });
}

function check(active: Guard, length: number): void {
  const held = process.memoryUsage().arrayBuffers - active.baseline;
  if (held + length <= active.maxBytes) return;
  active.exceeded = true;
  // pdf.js may catch this and go on to the next operator: `inflationExceeded` tells the reader all the same.
  throw new RangeError(`A PDF stream expands beyond ${megabytes(active.maxBytes)}.`);
}

/** Runs `read` with the cap on decoded bytes; throws UnreadableDocumentError when the PDF went past it. */
export async function withInflationLimit<T>(maxBytes: number, read: () => Promise<T>): Promise<T> {
  install();
  const active: Guard = { baseline: process.memoryUsage().arrayBuffers, maxBytes, exceeded: false };
  guard = active;
  try {
    const result = await read().catch((error: unknown) => {
      if (active.exceeded) throw expandsBeyond(maxBytes);
      throw error;
    });
    if (active.exceeded) throw expandsBeyond(maxBytes);
    return result;
  } finally {
    guard = undefined;
  }
}

/** Whether the PDF being read has gone past its cap (pdf.js may have carried on after the refused allocation). */
export function inflationExceeded(): boolean {
  return guard?.exceeded === true;
}

function expandsBeyond(maxBytes: number): UnreadableDocumentError {
  return new UnreadableDocumentError(
    'too_large',
    `The PDF could not be read: its content expands beyond ${megabytes(maxBytes)}.`,
  );
}
