// The splice a version write sends to Redis instead of the whole value: the new JSON as ranges of the stored JSON
// and new text, joined and checked here before anything is sent. Pure.
import { isDeepStrictEqual } from 'node:util';
import { slidFrom } from '../hot-store.js';

/**
 * The new JSON as pieces of the stored one (`c`, `<byte start>,<byte length>`) and text (`l`, text), when that sends
 * at most half its bytes: top-level fields left as they were are kept, and a list that lost items at its head and
 * gained some at its tail (a window of messages sliding on) keeps the items it still has. Undefined otherwise. The
 * pieces are joined here first and must give `nextJson` exactly, whatever the stored JSON holds.
 */
export function splicePieces(storedJson: string, nextJson: string): string[] | undefined {
  let stored: unknown;
  let next: unknown;
  try {
    stored = JSON.parse(storedJson);
    next = JSON.parse(nextJson);
  } catch {
    return undefined;
  }
  if (!isObject(stored) || !isObject(next)) return undefined;
  const fields = layout(stored);
  const pieces: ({ start: number; end: number } | string)[] = [];
  const text = (value: string) => {
    const last = pieces.at(-1);
    if (typeof last === 'string') pieces[pieces.length - 1] = last + value;
    else pieces.push(value);
  };
  const keep = (start: number, end: number) => {
    const last = pieces.at(-1);
    if (typeof last === 'object' && last.end === start) last.end = end;
    else pieces.push({ start, end });
  };
  text('{');
  Object.entries(next).forEach(([name, value], index) => {
    if (index > 0) text(',');
    const before = fields.get(name);
    if (before !== undefined && isDeepStrictEqual(before.value, value)) return keep(before.start, before.end);
    text(`${JSON.stringify(name)}:`);
    const dropped =
      before?.items !== undefined && Array.isArray(value)
        ? slidFrom(before.value as unknown[], value)
        : undefined;
    // A splice keeps at least one stored item; a list that kept none is sent whole.
    if (before?.items === undefined || dropped === undefined || dropped >= before.items.length)
      return text(JSON.stringify(value));
    const kept = before.items.slice(dropped);
    text('[');
    keep(kept[0]!.start, kept.at(-1)!.end);
    for (const item of (value as unknown[]).slice(kept.length)) text(`,${JSON.stringify(item)}`);
    text(']');
  });
  text('}');
  const joined = pieces.map((piece) =>
    typeof piece === 'string' ? piece : storedJson.slice(piece.start, piece.end),
  );
  if (joined.join('') !== nextJson) return undefined;
  const sent = pieces.reduce(
    (bytes, piece) => bytes + (typeof piece === 'string' ? Buffer.byteLength(piece) : 12),
    0,
  );
  if (sent * 2 > Buffer.byteLength(nextJson)) return undefined;
  const splits = (at: number) => /[\uDC00-\uDFFF]/.test(storedJson.charAt(at));
  if (pieces.some((piece) => typeof piece === 'object' && (splits(piece.start) || splits(piece.end))))
    return undefined;
  // Offsets in bytes, as Lua counts them: a piece that would cut a character in two is not sent.
  const bytes = (start: number, end: number) => Buffer.byteLength(storedJson.slice(start, end));
  return pieces.flatMap((piece) =>
    typeof piece === 'string'
      ? ['l', piece]
      : ['c', `${bytes(0, piece.start)},${bytes(piece.start, piece.end)}`],
  );
}

interface FieldLayout {
  value: unknown;
  /** Where `"name":value` starts and ends in the stored JSON (code units). */
  start: number;
  end: number;
  /** A list's items, where each starts and ends. */
  items?: { start: number; end: number }[];
}

/** Where JSON.stringify lays out each top-level field of `value` (checked by the caller, which joins the pieces). */
function layout(value: Record<string, unknown>): Map<string, FieldLayout> {
  const fields = new Map<string, FieldLayout>();
  let at = 1;
  Object.entries(value).forEach(([name, field], index) => {
    if (index > 0) at += 1;
    const valueStart = at + JSON.stringify(name).length + 1;
    const end = valueStart + (JSON.stringify(field) ?? 'null').length;
    let items: { start: number; end: number }[] | undefined;
    if (Array.isArray(field)) {
      let itemAt = valueStart + 1;
      items = field.map((item: unknown, i) => {
        if (i > 0) itemAt += 1;
        const start = itemAt;
        itemAt += (JSON.stringify(item) ?? 'null').length;
        return { start, end: itemAt };
      });
    }
    fields.set(name, { value: field, start: at, end, ...(items ? { items } : {}) });
    at = end;
  });
  return fields;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
