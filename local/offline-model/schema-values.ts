// Builds a JSON value that satisfies a JSON schema from the words of a message: the offline model's tool
// arguments and json_schema answers. Pure and deterministic; the rules are listed in README.md.

export type JsonSchema = Record<string, unknown>;

/** What a message offers to fill values with; numbers and quoted phrases are used up in order. */
export interface ValueSource {
  readonly text: string;
  readonly numbers: number[];
  readonly phrases: string[];
}

/** Strings default to the message text, cut to this many characters. */
const MAX_DEFAULT_STRING = 200;
const MAX_DEPTH = 8;

/** `ignore` lists words (the tool names) whose digits must not count as numbers, e.g. `top_3_results`. */
export function valueSourceFrom(text: string, ignore: readonly string[] = []): ValueSource {
  const scanned = ignore.reduce((t, word) => (word === '' ? t : t.split(word).join(' ')), text);
  return {
    text,
    // Standalone numbers only: "gpt-4o" or "3rd" hold none.
    numbers: (scanned.match(/(?<![\p{L}\p{N}_.])-?\d+(?:\.\d+)?(?![\p{L}\p{N}_])/gu) ?? []).map(Number),
    // Single quotes count only around words, so the apostrophe in "what's" opens nothing.
    phrases: [...scanned.matchAll(/"([^"]+)"|“([^”]+)”|(?<!\p{L})'([^']+)'(?!\p{L})/gu)].map(
      (m) => m[1] ?? m[2] ?? m[3] ?? '',
    ),
  };
}

/** A value valid against `schema`; objects get their required properties and those the text supplies. */
export function valueForSchema(schema: JsonSchema, source: ValueSource): unknown {
  return build(schema, source, { root: schema, depth: 0, name: '' });
}

interface Context {
  root: JsonSchema;
  depth: number;
  /** The property being filled, for booleans ("true when the text names the property"). */
  name: string;
}

function build(schema: JsonSchema, source: ValueSource, context: Context): unknown {
  const resolved = resolveRef(schema, context.root);
  if ('const' in resolved) return resolved['const'];
  const enumValues = resolved['enum'];
  if (Array.isArray(enumValues) && enumValues.length > 0) return pickEnum(enumValues, source.text);
  const branches = (resolved['anyOf'] ?? resolved['oneOf']) as JsonSchema[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) {
    const branch =
      branches.find((b) => isRecord(b) && typeOf(resolveRef(b, context.root)) !== 'null') ?? branches[0];
    return build(isRecord(branch) ? branch : {}, source, context);
  }
  if (context.depth > MAX_DEPTH) return null;
  const inner = { ...context, depth: context.depth + 1 };

  switch (typeOf(resolved)) {
    case 'null':
      return null;
    case 'boolean':
      return context.name !== '' && source.text.toLowerCase().includes(context.name.toLowerCase());
    case 'integer':
      return clampNumber(Math.round(source.numbers.shift() ?? 0), resolved, true);
    case 'number':
      return clampNumber(source.numbers.shift() ?? 0, resolved, false);
    case 'array': {
      const items = isRecord(resolved['items']) ? resolved['items'] : {};
      const min = numberOr(resolved['minItems'], 0);
      const max = numberOr(resolved['maxItems'], Number.POSITIVE_INFINITY);
      const count = Math.min(Math.max(min, 1), max);
      return Array.from({ length: count }, () => build(items, source, { ...inner, name: context.name }));
    }
    case 'object':
      return buildObject(resolved, source, inner);
    default:
      return buildString(resolved, source);
  }
}

function buildObject(schema: JsonSchema, source: ValueSource, context: Context): Record<string, unknown> {
  const properties = isRecord(schema['properties']) ? schema['properties'] : {};
  const required = Array.isArray(schema['required']) ? (schema['required'] as unknown[]) : [];
  const value: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (!isRecord(property)) continue;
    if (!required.includes(name) && !textSupplies(resolveRef(property, context.root), name, source)) continue;
    value[name] = build(property, source, { ...context, name });
  }
  return value;
}

/** Whether an optional property gets a value: only when the message has something for it. */
function textSupplies(schema: JsonSchema, name: string, source: ValueSource): boolean {
  const enumValues = schema['enum'];
  if (Array.isArray(enumValues)) return enumValues.some((v) => mentions(source.text, String(v)));
  switch (typeOf(schema)) {
    case 'integer':
    case 'number':
      return source.numbers.length > 0;
    case 'string':
      return source.phrases.length > 0;
    case 'boolean':
      return mentions(source.text, name);
    default:
      return false;
  }
}

function buildString(schema: JsonSchema, source: ValueSource): string {
  const format = schema['format'];
  if (format === 'date-time') return '2000-01-01T00:00:00Z';
  if (format === 'date') return '2000-01-01';
  if (format === 'time') return '00:00:00';
  if (format === 'email') return 'offline@example.com';
  if (format === 'uuid') return '00000000-0000-4000-8000-000000000000';
  if (format === 'uri' || format === 'url') return 'https://example.com/';
  let text = source.phrases.shift() ?? source.text.slice(0, MAX_DEFAULT_STRING);
  const min = numberOr(schema['minLength'], 0);
  const max = numberOr(schema['maxLength'], Number.POSITIVE_INFINITY);
  if (text.length < min) text = text.padEnd(min, text === '' ? '.' : ` ${text}`);
  return cutToLength(text, max);
}

/** Cuts at a code point boundary so no surrogate pair is split, keeping `.length` (what zod counts) ≤ max. */
function cutToLength(text: string, max: number): string {
  if (text.length <= max) return text;
  let result = '';
  for (const char of text) {
    if (result.length + char.length > max) break;
    result += char;
  }
  return result;
}

function clampNumber(value: number, schema: JsonSchema, integer: boolean): number {
  const step = integer ? 1 : 1e-6;
  let result = value;
  const minimum = numberOr(schema['minimum'], Number.NEGATIVE_INFINITY);
  const maximum = numberOr(schema['maximum'], Number.POSITIVE_INFINITY);
  const exclusiveMinimum = numberOr(schema['exclusiveMinimum'], Number.NEGATIVE_INFINITY);
  const exclusiveMaximum = numberOr(schema['exclusiveMaximum'], Number.POSITIVE_INFINITY);
  result = Math.max(result, minimum, exclusiveMinimum + step);
  result = Math.min(result, maximum, exclusiveMaximum - step);
  return integer ? Math.ceil(result) : result;
}

function pickEnum(values: unknown[], text: string): unknown {
  return values.find((value) => mentions(text, String(value))) ?? values[0];
}

function mentions(text: string, word: string): boolean {
  return word !== '' && text.toLowerCase().includes(word.toLowerCase());
}

function typeOf(schema: JsonSchema): string | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return (type.find((t) => t !== 'null') ?? type[0]) as string | undefined;
  if (isRecord(schema['properties'])) return 'object';
  if (isRecord(schema['items'])) return 'array';
  return undefined;
}

/** Follows local `$ref`s (`#/$defs/x`, `#/definitions/x`) as zod and other generators write them. */
function resolveRef(schema: JsonSchema, root: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; hops < MAX_DEPTH && typeof current['$ref'] === 'string'; hops++) {
    const ref = current['$ref'];
    if (ref === '#') return root;
    if (!ref.startsWith('#/')) return {};
    let target: unknown = root;
    for (const part of ref.slice(2).split('/')) {
      const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isRecord(target) ? target[key] : undefined;
    }
    current = isRecord(target) ? target : {};
  }
  return current;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
