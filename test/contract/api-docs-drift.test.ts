// docs/api.md is what scripts/generate-api-docs.ts writes from the endpoint declarations: an endpoint added,
// removed or changed without `npm run generate` fails here, and so does an endpoint nobody described.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HttpFunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import { API_DOCS_PATH, buildApiDocs, describeType } from '../../scripts/generate-api-docs.js';

const httpFunctions = functionDefinitions.filter((d): d is HttpFunctionDefinition => d.kind === 'http');

describe('docs/api.md', () => {
  it('is what the generator writes from the declared endpoints (else run `npm run generate`)', async () => {
    expect(readFileSync(API_DOCS_PATH, 'utf8')).toBe(await buildApiDocs());
  }, 60_000);

  it('describes every HTTP function of the table with a summary and a success status', () => {
    for (const definition of httpFunctions) {
      const declaration = definition.declaration;
      expect(declaration, definition.name).toBeDefined();
      expect(declaration?.summary.trim(), definition.name).not.toBe('');
      const statuses = Object.keys(declaration?.responses ?? {}).map(Number);
      expect(
        statuses.some((status) => status >= 200 && status < 400),
        definition.name,
      ).toBe(true);
    }
  });

  it('has a section for every route and method', async () => {
    const page = await buildApiDocs();
    for (const definition of httpFunctions)
      expect(page, definition.name).toContain(
        `### \`${definition.methods.join(', ')} /api/${definition.route}\``,
      );
  }, 60_000);

  it('reads field types from JSON Schema in a few words', () => {
    expect(describeType({ type: 'integer', minimum: 1, maximum: 20, default: 5 })).toBe(
      'integer (1–20), default 5',
    );
    expect(describeType({ enum: ['asc', 'desc'], default: 'asc' })).toBe('"asc" | "desc", default "asc"');
    expect(
      describeType({
        type: 'string',
        pattern: '^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$',
      }),
    ).toBe('string (UUID)');
    expect(describeType({ type: 'array', items: { type: 'string' }, maxItems: 3 })).toBe(
      'string[] (at most 3)',
    );
  });
});
