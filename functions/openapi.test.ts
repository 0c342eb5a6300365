// GET /api/openapi.json and /api/docs in process: the document is valid OpenAPI 3.1 for every auth mode, lists every
// declared endpoint with its methods, and api.http names only its routes; the page escapes what it shows.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { documentationApp } from '../scripts/generate-api-docs.js';
import type { App } from '../shared/app/app.js';
import type { AuthConfig } from '../shared/identity/settings.js';
import { declaredEndpoints, undeclaredReplies } from '../shared/http/declared-endpoints.js';
import { escapeHtml, escapeProse } from '../shared/http/openapi-page.js';
import { callEndpoint } from '../test/support/call-endpoint.js';
import type { HttpFunctionDefinition } from './definition.js';
import { openApiEndpoints } from './openapi.js';
import { functionDefinitions } from './table.js';

const httpFunctions = functionDefinitions.filter((d): d is HttpFunctionDefinition => d.kind === 'http');
const { openApi, apiPage } = openApiEndpoints(() => functionDefinitions);

interface Document {
  openapi: string;
  info: { version: string };
  paths: Record<
    string,
    Record<string, { security: Record<string, string[]>[]; responses: Record<string, unknown> }>
  >;
  components: { securitySchemes: Record<string, { type: string; name?: string; in?: string }> };
}

/** The app the docs are generated with (every setting at its default), identifying callers as `auth` says. */
function appWith(auth?: AuthConfig): App {
  const app = documentationApp();
  return auth === undefined ? app : ({ config: { ...app.config, auth } } as unknown as App);
}

async function documentOf(app: App): Promise<Document> {
  const reply = await callEndpoint(openApi, app);
  expect(reply.status).toBe(200);
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  return reply.json<Document>();
}

const ENTRA: AuthConfig = {
  mode: 'entra',
  tenantId: '00000000-0000-0000-0000-0000000000aa',
  audiences: ['11111111-1111-1111-1111-111111111111'],
  issuer: 'https://login.microsoftonline.com/00000000-0000-0000-0000-0000000000aa/v2.0',
  jwksUrl: 'https://login.microsoftonline.com/00000000-0000-0000-0000-0000000000aa/discovery/v2.0/keys',
  scope: 'user_impersonation',
  serviceAppRole: 'Memory.Service',
};
const APP_SERVICE: AuthConfig = { mode: 'app-service' };

const openApiPath = (route: string) => `/api/${route.replace(/\{\*?(\w+)[^}]*\}/g, '{$1}')}`;

describe('GET /api/openapi.json', () => {
  it.each([
    ['dev', undefined],
    ['app-service', APP_SERVICE],
    ['entra', ENTRA],
  ])(
    'is a valid OpenAPI 3.1 document with AUTH_MODE=%s',
    async (_mode, auth) => {
      const document = await documentOf(appWith(auth));
      const validator = new Validator();
      const result = await validator.validate(document as unknown as Record<string, unknown>);
      expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
    },
    60_000,
  );

  it('has every declared HTTP endpoint with each of its methods, and the package version', async () => {
    const document = await documentOf(appWith());
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(document.info.version).toBe(manifest.version);
    for (const fn of httpFunctions)
      for (const method of fn.methods)
        expect(
          document.paths[openApiPath(fn.route)]?.[method.toLowerCase()],
          `${method} /api/${fn.route}`,
        ).toBeDefined();
  }, 60_000);

  it("says who may call: anyone, the caller's scheme per AUTH_MODE, or a stream ticket", async () => {
    const dev = await documentOf(appWith());
    expect(dev.paths['/api/health']?.['get']?.security).toEqual([]);
    expect(dev.components.securitySchemes['caller']).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'x-ms-client-principal-id',
    });
    expect(dev.paths['/api/stream/{sessionId}/{chatMessageId}']?.['get']?.security).toEqual([
      { caller: [] },
      { streamTicket: [] },
    ]);
    expect(dev.components.securitySchemes['streamTicket']).toMatchObject({ in: 'query', name: 'ticket' });
    const entra = await documentOf(appWith(ENTRA));
    expect(entra.components.securitySchemes['caller']?.type).toBe('oauth2');
    expect(entra.paths['/api/chat']?.['post']?.security).toEqual([
      { caller: ['api://11111111-1111-1111-1111-111111111111/user_impersonation'] },
    ]);
    // A route that takes personal API keys names the key's bearer scheme beside the sign-in; others do not.
    expect(entra.paths['/api/mcp']?.['post']?.security).toEqual([
      { caller: ['api://11111111-1111-1111-1111-111111111111/user_impersonation'] },
      { apiKey: [] },
    ]);
    expect(entra.components.securitySchemes['apiKey']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(JSON.stringify(entra.paths['/api/api-keys'])).not.toContain('"apiKey"');
  }, 60_000);

  it('answers errors as problem+json with the shared ProblemDetails schema', async () => {
    const document = await documentOf(appWith());
    const posted = document.paths['/api/chat']?.['post']?.responses;
    expect(Object.keys(posted ?? {})).toEqual([
      '202',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '415',
      '429',
    ]);
    expect(posted?.['409']).toMatchObject({
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } } },
    });
    const upload = document.paths['/api/knowledge/documents']?.['post'] as unknown as {
      requestBody: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
    };
    expect(Object.keys(upload.requestBody.content)).toEqual(['application/json', 'multipart/form-data']);
    expect(upload.requestBody.content['multipart/form-data']?.schema.properties?.['file']).toMatchObject({
      format: 'binary',
    });
  }, 60_000);

  it('declares the body of every success answer, from the schemas the handlers answer with', async () => {
    const app = appWith();
    const missing = declaredEndpoints<App>(functionDefinitions).flatMap((endpoint) =>
      undeclaredReplies(endpoint, app).map((status) => `${endpoint.name} ${status}`),
    );
    expect(missing).toEqual([]);
    const document = await documentOf(app);
    type Response = { content?: Record<string, { schema: Record<string, unknown> }> };
    const responseOf = (path: string, method: string, status: string) =>
      document.paths[path]?.[method]?.responses[status] as Response | undefined;
    for (const [path, item] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(item))
        for (const [status, response] of Object.entries(operation.responses))
          if (Number(status) < 400 && status !== '204')
            expect((response as Response).content, `${method} ${path} ${status}`).toBeDefined();
    expect(responseOf('/api/chat', 'post', '202')?.content?.['application/json']?.schema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['sessionId', 'chatMessageId', 'status', 'stream']) as unknown,
    });
    expect(
      Object.keys(responseOf('/api/history/conversations/{sessionId}/export', 'get', '200')?.content ?? {}),
    ).toEqual(['text/markdown', 'application/json']);
    expect(
      Object.keys(responseOf('/api/stream/{sessionId}/{chatMessageId}', 'get', '200')?.content ?? {}),
    ).toEqual(['text/event-stream']);
    // A conversation's messages carry the answer's reasoning and the turn's use_memory mark.
    const conversation = JSON.stringify(
      responseOf('/api/history/conversations/{sessionId}', 'get', '200')?.content?.['application/json']
        ?.schema,
    );
    for (const field of ['"reasoning"', '"durationMs"', '"useMemory"']) expect(conversation).toContain(field);
    // The health probe's 503 is its report, not a problem.
    expect(Object.keys(responseOf('/api/health', 'get', '503')?.content ?? {})).toEqual(['application/json']);
    expect(responseOf('/api/chat/{sessionId}/{chatMessageId}/cancel', 'post', '200')).toMatchObject({
      content: { 'application/json': { schema: { properties: { status: { const: 'finished' } } } } },
    });
  }, 60_000);

  it('is built once per app, and the same for every caller', async () => {
    const app = appWith();
    const first = await callEndpoint(openApi, app);
    const second = await callEndpoint(openApi, app, { headers: { 'x-ms-client-principal-id': 'user_002' } });
    expect(await second.text()).toBe(await first.text());
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
  }, 60_000);
});

describe('api.http', () => {
  it('names only routes and methods the document has, and each of them', async () => {
    const document = await documentOf(appWith());
    const text = readFileSync(fileURLToPath(new URL('../api.http', import.meta.url)), 'utf8');
    const requests = [...text.matchAll(/^(GET|HEAD|POST|PUT|PATCH|DELETE) \{\{baseUrl\}\}(\S*)$/gm)];
    expect(requests.length).toBeGreaterThan(10);
    const templates = Object.keys(document.paths).map((path) => ({
      path,
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
    const covered = new Set<string>();
    // Other requests are the local runtime's own (its dead-letter view), not the API's.
    for (const [, method, url] of requests.filter(([, , url]) => !(url ?? '').startsWith('/local/'))) {
      // A URL that is one variable (the stream URL POST /api/chat answers) is the stream route's.
      const path = (url ?? '').startsWith('/') ? (url ?? '').split('?')[0]! : '/api/stream/x/y';
      const template = templates.find(({ pattern }) => pattern.test(path.replace(/\{\{[^}]+\}\}/g, 'x')));
      expect(template, `${method} ${url}`).toBeDefined();
      expect(document.paths[template!.path]?.[method!.toLowerCase()], `${method} ${url}`).toBeDefined();
      covered.add(`${method!.toLowerCase()} ${template!.path}`);
    }
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${path}`),
    );
    expect(operations.filter((operation) => !covered.has(operation))).toEqual([]);
  }, 60_000);
});

describe('GET /api/docs', () => {
  it('renders every operation of the document as HTML, with no script and nothing fetched', async () => {
    const app = appWith();
    const reply = await callEndpoint(apiPage, app);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(reply.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'",
    );
    const page = await reply.text();
    expect(page).not.toMatch(/<script/i);
    expect(page).toContain('href="/api/openapi.json"');
    for (const fn of httpFunctions)
      for (const method of fn.methods)
        expect(page, `${method} /api/${fn.route}`).toContain(
          `<span class="method">${method.toLowerCase()}</span> ${escapeHtml(openApiPath(fn.route))}</h3>`,
        );
  }, 60_000);

  it('escapes markup in what it shows', () => {
    expect(escapeHtml(`<img src=x onerror="a()">&'`)).toBe(
      '&lt;img src=x onerror=&quot;a()&quot;&gt;&amp;&#39;',
    );
  });
});

describe('the page and the document, as a client generator reads them', () => {
  it('types a page size as the integer it stands for, with its bounds', async () => {
    const document = (await documentOf(appWith())) as unknown as {
      paths: Record<
        string,
        Record<string, { parameters?: { name: string; schema: Record<string, unknown> }[] }>
      >;
    };
    const limits = Object.values(document.paths).flatMap((item) =>
      Object.values(item).flatMap((operation) =>
        (operation.parameters ?? []).filter((parameter) => parameter.name === 'limit'),
      ),
    );
    expect(limits.length).toBeGreaterThanOrEqual(4);
    for (const limit of limits) {
      expect(limit.schema['type']).toBe('integer');
      expect(limit.schema['minimum']).toBe(1);
      expect(typeof limit.schema['maximum']).toBe('number');
    }
  }, 60_000);

  it('shows Markdown code spans as code, still escaped', () => {
    expect(escapeProse('Set `AUTH_MODE` to <b>entra</b>')).toBe(
      'Set <code>AUTH_MODE</code> to &lt;b&gt;entra&lt;/b&gt;',
    );
  });

  it('accepts HEAD, as link checkers send it', async () => {
    const reply = await callEndpoint(apiPage, appWith(), { method: 'HEAD' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
  }, 60_000);
});
