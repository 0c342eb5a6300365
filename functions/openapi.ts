// GET /api/openapi.json: the OpenAPI 3.1 document of every declared endpoint, built once per app; GET /api/docs: the
// same document as a plain HTML page. Both anonymous: they describe the API, never anyone's data.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '../shared/app/app.js';
import { declaredEndpoints } from '../shared/http/declared-endpoints.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../shared/http/openapi.js';
import { API_PAGE_CONTENT_SECURITY_POLICY, renderOpenApiPage } from '../shared/http/openapi-page.js';
import { API_AREAS } from './api-areas.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';
import { z } from 'zod';

export const OPENAPI_ROUTE = 'openapi.json';
export const API_PAGE_ROUTE = 'docs';

const TITLE = 'Memory-aware chat backend';
const DESCRIPTION =
  'A chat backend with long-term memory: post messages, stream their answers (SSE or Web PubSub), read and manage ' +
  'history, memories and a knowledge base. Errors are RFC 9457 problem details with a stable `code`.';

/** The same for every caller and fixed for the process's life: clients and proxies may keep it a few minutes. */
const CACHE_CONTROL = 'public, max-age=300';

/** The package's version, from the package.json above this module (functions/ locally, dist/functions in Azure). */
async function packageVersion(): Promise<string> {
  let folder = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(await readFile(path.join(folder, 'package.json'), 'utf8')) as {
        version?: unknown;
      };
      if (typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No readable package.json here: look further up.
    }
    const parent = path.dirname(folder);
    if (parent === folder) return '0.0.0';
    folder = parent;
  }
}

/**
 * The two endpoints, reading the function table through `table` (called at request time, so the table may list
 * them too without an import cycle). The document is built once per app: the declarations and settings are fixed.
 */
export function openApiEndpoints(table: () => readonly FunctionDefinition[]) {
  const built = new WeakMap<App, Promise<OpenApiDocument>>();
  const documentOf = (app: App): Promise<OpenApiDocument> => {
    let document = built.get(app);
    if (document === undefined) {
      document = packageVersion().then((version) =>
        buildOpenApiDocument({
          endpoints: declaredEndpoints<App>(table()),
          app,
          auth: app.config.auth,
          title: TITLE,
          version,
          description: DESCRIPTION,
          tags: API_AREAS,
        }),
      );
      built.set(app, document);
    }
    return document;
  };

  const openApi = endpoint({
    name: 'openApi',
    route: OPENAPI_ROUTE,
    methods: ['GET'],
    summary: 'The OpenAPI 3.1 document of this API, generated from the endpoint declarations.',
    auth: 'anonymous',
    responses: { 200: 'the OpenAPI document (JSON)' },
    replies: {
      200: z
        .looseObject({
          openapi: z.string(),
          info: z.looseObject({}),
          paths: z.record(z.string(), z.looseObject({})),
        })
        .describe('an OpenAPI 3.1 document'),
    },
    async handle({ app }) {
      return { status: 200, body: await documentOf(app), headers: { 'cache-control': CACHE_CONTROL } };
    },
  });

  const apiPage = endpoint({
    name: 'apiReference',
    route: API_PAGE_ROUTE,
    // HEAD too: link checkers and proxies ask for the page's headers alone.
    methods: ['GET', 'HEAD'],
    summary: 'The OpenAPI document as an HTML page to read in a browser (no script, nothing downloaded).',
    auth: 'anonymous',
    responses: { 200: 'text/html: every endpoint with its parameters, bodies and statuses' },
    replies: { 200: { content: { 'text/html': z.string().describe('the API reference page') } } },
    async handle({ app }) {
      return {
        status: 200,
        text: renderOpenApiPage(await documentOf(app), `/api/${OPENAPI_ROUTE}`),
        headers: {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': API_PAGE_CONTENT_SECURITY_POLICY,
          'x-content-type-options': 'nosniff',
          'cache-control': CACHE_CONTROL,
        },
      };
    },
  });

  return { openApi, apiPage };
}

export function openApiFunctions(table: () => readonly FunctionDefinition[]): FunctionDefinition[] {
  const { openApi, apiPage } = openApiEndpoints(table);
  return [httpFunction(openApi), httpFunction(apiPage)];
}
