// The OpenAPI builder on small declarations: host route templates become path templates, recursive schemas land in
// components (their `$defs` would not resolve inside the document), and the result stays valid OpenAPI 3.1.
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { undeclaredReplies, type DeclaredEndpoint } from './declared-endpoints.js';
import { apiAreaOf, buildOpenApiDocument, openApiRoute } from './openapi.js';

interface Tree {
  name: string;
  children: Tree[];
}
const treeSchema: z.ZodType<Tree> = z.object({
  name: z.string(),
  get children() {
    return z.array(treeSchema);
  },
});

const AREAS = [{ title: 'Trees', routePrefixes: ['trees'], note: 'Trees.' }];

const endpoints: DeclaredEndpoint<{ limit: number }>[] = [
  {
    name: 'putTree',
    route: 'trees/{treeId:alpha}/{*rest}',
    methods: ['PUT', 'POST'],
    declaration: {
      summary: 'Stores a tree.',
      auth: 'caller',
      params: z.object({ treeId: z.string().describe('the tree') }),
      query: z.object({ depth: z.coerce.number().int().min(1).default(3) }),
      body: { schema: treeSchema, maxBytes: (app) => app.limit, what: 'tree' },
      responses: { 201: 'stored', 404: 'no such forest' },
      replies: { 201: z.object({ stored: treeSchema, previous: treeSchema.optional() }) },
    },
  },
];

describe('buildOpenApiDocument', () => {
  const document = buildOpenApiDocument({
    endpoints,
    app: { limit: 2048 },
    auth: { mode: 'dev' },
    title: 'Trees',
    version: '1.2.3',
    description: 'A test API.',
    tags: AREAS,
  });
  const path = document.paths['/api/trees/{treeId}/{rest}'] as Record<string, Record<string, unknown>>;

  it('is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(document);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
  }, 60_000);

  it('turns route constraints and catch-alls into plain path parameters, each required', () => {
    expect(openApiRoute('a/{id:int}/{name?}/{*rest}')).toBe('a/{id}/{name}/{rest}');
    expect(path['put']?.['parameters']).toEqual([
      { name: 'treeId', in: 'path', required: true, description: 'the tree', schema: { type: 'string' } },
      { name: 'rest', in: 'path', required: true, schema: { type: 'string' } },
      {
        name: 'depth',
        in: 'query',
        required: false,
        schema: expect.objectContaining({ type: 'integer', minimum: 1, default: 3 }) as unknown,
      },
    ]);
    expect([path['put']?.['operationId'], path['post']?.['operationId']]).toEqual([
      'putTreePut',
      'putTreePost',
    ]);
  });

  it("moves a schema's $defs and its references to itself into components, and points its references there", () => {
    const text = JSON.stringify(document);
    expect(text).not.toMatch(/"\$ref":"#(\/\$defs\/[^"]*)?"/);
    const schemas = (document['components'] as { schemas: Record<string, unknown> }).schemas;
    // The body is a tree of itself: it is a component, and its children refer to it.
    expect(path['put']?.['requestBody']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/putTreePut.body' } } },
    });
    expect(schemas['putTreePut.body']).toMatchObject({
      properties: { children: { items: { $ref: '#/components/schemas/putTreePut.body' } } },
    });
    // The reply holds the tree twice: zod shares it through $defs, now a component of its own.
    expect(Object.keys(schemas).some((name) => name.startsWith('putTreePut.reply201.'))).toBe(true);
    for (const [, ref] of text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g))
      expect(schemas[ref!], ref).toBeDefined();
  });

  it('reads the body limit from the app, and names the area an endpoint falls outside of', () => {
    expect(path['put']?.['requestBody']).toMatchObject({ required: true, description: 'At most 2 KiB.' });
    expect(() => apiAreaOf({ ...endpoints[0]!, name: 'lost', route: 'nowhere/{id}' }, AREAS)).toThrow(
      /'lost' \(route nowhere\/\{id\}\) belongs to no area/,
    );
  });
});

describe('replies', () => {
  const file: DeclaredEndpoint<{ limit: number }> = {
    name: 'getTreeFile',
    route: 'trees/{treeId}/file',
    methods: ['GET'],
    declaration: {
      summary: 'A tree as a file.',
      auth: 'anonymous',
      responses: { 200: 'the tree as CSV or JSON', 204: 'an empty tree', 503: 'the forest is busy' },
      replies: {
        200: {
          content: { 'text/csv': z.string().describe('one row per node'), 'application/json': treeSchema },
        },
        503: z.object({ retryInSeconds: z.number() }),
      },
    },
  };
  const document = buildOpenApiDocument({
    endpoints: [file],
    app: { limit: 1 },
    auth: { mode: 'dev' },
    title: 'Trees',
    version: '1.0.0',
    description: 'Files.',
    tags: AREAS,
  });
  const responses = (
    document.paths['/api/trees/{treeId}/file']?.['get'] as { responses: Record<string, unknown> }
  ).responses;

  it('shows each media type of a reply, and a declared error body instead of problem details', async () => {
    expect(responses['200']).toMatchObject({
      content: {
        'text/csv': { schema: { type: 'string', description: 'one row per node' } },
        'application/json': { schema: { $ref: '#/components/schemas/getTreeFile.reply200.1' } },
      },
    });
    expect(responses['204']).toEqual({ description: 'an empty tree' });
    expect(responses['503']).toMatchObject({
      content: { 'application/json': { schema: { properties: { retryInSeconds: { type: 'number' } } } } },
    });
    const result = await new Validator().validate(document);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
  }, 60_000);

  it('names the success statuses with a body and no reply schema; 204 needs none', () => {
    expect(undeclaredReplies(file, { limit: 1 })).toEqual([]);
    expect(undeclaredReplies(endpoints[0]!, { limit: 1 })).toEqual([]);
    expect(
      undeclaredReplies({ ...file, declaration: { ...file.declaration, replies: {} } }, { limit: 1 }),
    ).toEqual([200]);
  });
});
