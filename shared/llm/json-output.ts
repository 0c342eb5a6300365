// Pure helpers for structured output: the json_schema response format derived from a zod schema, and
// reading the model's JSON back out of what local servers sometimes wrap around it.
import { z } from 'zod';

export interface JsonSchemaResponseFormat {
  type: 'json_schema';
  json_schema: { name: string; schema: Record<string, unknown>; strict: boolean };
}

export function toJsonSchemaResponseFormat(schema: z.ZodType, name: string): JsonSchemaResponseFormat {
  const jsonSchema = z.toJSONSchema(schema, { target: 'draft-7', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete jsonSchema['$schema'];
  stripSafeIntegerBounds(jsonSchema);
  // Strict mode only accepts closed objects whose properties are all required; asking for it with any
  // other schema is a 400 on OpenAI and Azure, so fall back to best effort and let zod have the last word.
  return {
    type: 'json_schema',
    json_schema: { name, schema: jsonSchema, strict: isStrictCompatible(jsonSchema) },
  };
}

/** True when every object in the schema is closed and lists all its properties as required. */
export function isStrictCompatible(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(isStrictCompatible);
  if (typeof schema !== 'object' || schema === null) return true;
  const node = schema as Record<string, unknown>;
  const properties = node['properties'];
  if (typeof properties === 'object' && properties !== null) {
    const required = Array.isArray(node['required']) ? (node['required'] as unknown[]) : [];
    if (node['additionalProperties'] !== false) return false;
    if (!Object.keys(properties).every((key) => required.includes(key))) return false;
  } else if (node['type'] === 'object' && node['additionalProperties'] !== false) {
    return false;
  }
  return Object.entries(node).every(
    ([key, value]) => key === 'enum' || key === 'const' || isStrictCompatible(value),
  );
}

/**
 * The JSON text inside a model's answer: some local models put their thoughts in `<think>` tags before the
 * answer, or fence it as ```json even when a schema was requested.
 */
export function extractJsonText(content: string): string {
  let text = content.replace(/^\s*<think>[\s\S]*?<\/think>/, '').trim();
  const fenced = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i.exec(text);
  if (fenced?.[1] !== undefined) text = fenced[1].trim();
  return text;
}

/** Parses and validates; returns the problems as text a model can act on when it fails. */
export function parseJsonOutput<T>(
  content: string,
  schema: z.ZodType<T>,
): { ok: true; value: T } | { ok: false; problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(extractJsonText(content));
  } catch (error) {
    return { ok: false, problem: `The answer is not valid JSON (${(error as Error).message}).` };
  }
  const result = schema.safeParse(parsed);
  if (result.success) return { ok: true, value: result.data };
  const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  return { ok: false, problem: `The JSON does not match the schema: ${issues.join('; ')}.` };
}

// zod writes ±(2^53-1) bounds on every .int(); they carry no meaning and strict mode has limited keyword support.
function stripSafeIntegerBounds(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(stripSafeIntegerBounds);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  if (record['minimum'] === Number.MIN_SAFE_INTEGER) delete record['minimum'];
  if (record['maximum'] === Number.MAX_SAFE_INTEGER) delete record['maximum'];
  for (const value of Object.values(record)) stripSafeIntegerBounds(value);
}
