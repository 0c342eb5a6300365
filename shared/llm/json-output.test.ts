// Structured-output helpers: the response format sent for a zod schema and reading answers back.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  extractJsonText,
  isStrictCompatible,
  parseJsonOutput,
  toJsonSchemaResponseFormat,
} from './json-output.js';

describe('toJsonSchemaResponseFormat', () => {
  it('asks for strict mode when every object is closed and fully required', () => {
    const format = toJsonSchemaResponseFormat(
      z.object({ count: z.number().int(), nested: z.object({ ok: z.boolean() }), tags: z.array(z.string()) }),
      'summary',
    );
    expect(format.json_schema.strict).toBe(true);
    expect(format.json_schema.name).toBe('summary');
    expect(format.json_schema.schema).not.toHaveProperty('$schema');
    // zod's ±(2^53-1) bounds on .int() are dropped.
    expect(format.json_schema.schema).toMatchObject({ properties: { count: { type: 'integer' } } });
    expect(JSON.stringify(format.json_schema.schema)).not.toContain('9007199254740991');
  });

  it('falls back to best effort when a property is optional or an object is open', () => {
    expect(toJsonSchemaResponseFormat(z.object({ a: z.string().optional() }), 'x').json_schema.strict).toBe(
      false,
    );
    expect(
      toJsonSchemaResponseFormat(z.object({ a: z.record(z.string(), z.number()) }), 'x').json_schema.strict,
    ).toBe(false);
    expect(
      isStrictCompatible({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }),
    ).toBe(false);
  });
});

describe('extractJsonText / parseJsonOutput', () => {
  const schema = z.object({ title: z.string() });

  it('unwraps think blocks and code fences that local models add', () => {
    expect(extractJsonText('<think>plan</think>\n```json\n{"title":"a"}\n```')).toBe('{"title":"a"}');
    expect(extractJsonText('  {"title":"b"} ')).toBe('{"title":"b"}');
  });

  it('explains what is wrong in words a model can act on', () => {
    expect(parseJsonOutput('{"title":"ok"}', schema)).toEqual({ ok: true, value: { title: 'ok' } });
    const notJson = parseJsonOutput('title: ok', schema);
    expect(notJson.ok === false && notJson.problem).toMatch(/^The answer is not valid JSON/);
    const wrong = parseJsonOutput('{"title":3}', schema);
    expect(wrong.ok === false && wrong.problem).toMatch(/^The JSON does not match the schema: title: /);
  });
});
