// Values built from a message for a JSON schema: tool arguments and json_schema answers.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { valueForSchema, valueSourceFrom } from './schema-values.js';

const numbers = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'integer' }, note: { type: 'string' } },
  required: ['a', 'b'],
};

describe('valueForSchema', () => {
  it('fills number/integer properties in order with the numbers of the text', () => {
    expect(valueForSchema(numbers, valueSourceFrom('add 2.5 and 3.4 please'))).toEqual({ a: 2.5, b: 3 });
    expect(valueForSchema(numbers, valueSourceFrom('add -2 and 7, "exactly"'))).toEqual({
      a: -2,
      b: 7,
      note: 'exactly',
    });
    // Missing numbers become 0; digits inside words and tool names do not count.
    expect(valueForSchema(numbers, valueSourceFrom('top_3_results with gpt-4o', ['top_3_results']))).toEqual({
      a: 0,
      b: 0,
    });
  });

  it('fills strings with quoted phrases first, then the text', () => {
    const schema = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };
    expect(valueForSchema(schema, valueSourceFrom("search_kb for 'refund policy'"))).toEqual({
      query: 'refund policy',
    });
    expect(valueForSchema(schema, valueSourceFrom("what's the refund policy?"))).toEqual({
      query: "what's the refund policy?",
    });
  });

  it('picks the enum value the text names, booleans named by the text, one array item', () => {
    const schema = {
      type: 'object',
      properties: {
        units: { type: 'string', enum: ['c', 'f', 'kelvin'] },
        verbose: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string', maxLength: 4 } },
      },
      required: ['units', 'verbose', 'tags'],
    };
    expect(valueForSchema(schema, valueSourceFrom('weather in kelvin, verbose'))).toEqual({
      units: 'kelvin',
      verbose: true,
      tags: ['weat'],
    });
  });

  it('produces JSON that zod accepts for a realistic structured-output schema', () => {
    const schema = z.object({
      summary: z.string().min(10).max(40),
      themes: z.array(z.string()).min(2).max(3),
      sentiment: z.enum(['positive', 'neutral', 'negative']),
      importance: z.number().int().min(1).max(5),
      when: z.iso.datetime(),
      person: z.object({ name: z.string(), role: z.string().nullable() }),
      mood: z.union([z.literal('calm'), z.literal('tense')]).optional(),
    });
    const jsonSchema = z.toJSONSchema(schema, { target: 'draft-7' }) as Record<string, unknown>;
    const text = 'Summarise 🧡: we had a negative chat, importance 9';
    const value = valueForSchema(jsonSchema, valueSourceFrom(text));
    expect(schema.parse(value)).toMatchObject({
      sentiment: 'negative',
      importance: 5,
      themes: [text.slice(0, 200), text],
    });
  });

  it('follows local $refs', () => {
    const schema = {
      type: 'object',
      properties: { place: { $ref: '#/$defs/place' } },
      required: ['place'],
      $defs: { place: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    };
    expect(valueForSchema(schema, valueSourceFrom('"Rome"'))).toEqual({ place: { city: 'Rome' } });
  });
});
