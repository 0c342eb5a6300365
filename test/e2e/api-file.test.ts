// api.http is runnable as it is: every HTTP function has a request there, none names a missing route, and
// played top to bottom against the local runtime (and an MCP server of the test's own) every request answers as it
// expects.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { HttpFunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { startTestRuntime } from '../support/local-runtime.js';
import { startTestMcpServer, type TestMcpServer } from '../support/test-mcp-server.js';

interface FileRequest {
  name: string | undefined;
  /** The status a request answers on purpose; absent: any success. */
  expect: number | undefined;
  method: string;
  url: string;
  headers: [string, string][];
  body: string;
}

const text = readFileSync(fileURLToPath(new URL('../../api.http', import.meta.url)), 'utf8');

/** The file's variables and requests, in order (the subset of the REST Client format the file uses). */
function parse(source: string): { variables: Map<string, string>; requests: FileRequest[] } {
  const variables = new Map<string, string>();
  const requests: FileRequest[] = [];
  for (const block of source.split(/^###.*$/m)) {
    const lines = block.split('\n');
    let name: string | undefined;
    let expectedStatus: number | undefined;
    let request: FileRequest | undefined;
    let inBody = false;
    for (const line of lines) {
      const variable = /^@(\w+)\s*=\s*(.*)$/.exec(line);
      if (!request && variable) variables.set(variable[1]!, variable[2]!.trim());
      else if (!request && /^#\s*@name\s+(\w+)/.test(line)) name = /^#\s*@name\s+(\w+)/.exec(line)![1];
      else if (!request && /^#\s*@expect\s+(\d{3})/.test(line))
        expectedStatus = Number(/^#\s*@expect\s+(\d{3})/.exec(line)![1]);
      else if (!request && /^(GET|HEAD|POST|PUT|PATCH|DELETE) /.test(line)) {
        const [method, url] = line.trim().split(/\s+/);
        request = { name, expect: expectedStatus, method: method!, url: url!, headers: [], body: '' };
      } else if (request && !inBody && line.trim() === '') inBody = true;
      else if (request && !inBody && !line.startsWith('#')) {
        const colon = line.indexOf(':');
        request.headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
      } else if (request && inBody) request.body += `${line}\n`;
    }
    if (request) requests.push(request);
  }
  return { variables, requests };
}

const { variables, requests } = parse(text);
const httpFunctions = functionDefinitions.filter((d): d is HttpFunctionDefinition => d.kind === 'http');
const routePattern = (route: string) => new RegExp(`^/api/${route.replace(/\{[^}]+\}/g, '[^/]+')}$`, 'i');
const pathOf = (url: string) => url.replace(/^\{\{baseUrl\}\}/, '').split('?')[0]!;

describe('api.http', () => {
  it('has a request for every HTTP function of the table, and none for a route that does not exist', () => {
    for (const fn of httpFunctions)
      for (const method of fn.methods)
        expect(
          requests.some((r) => r.method === method && routePattern(fn.route).test(pathOf(r.url))),
          `${method} /api/${fn.route} (${fn.name}) has no request in api.http`,
        ).toBe(true);
    for (const request of requests.filter((r) => pathOf(r.url).startsWith('/api/')))
      expect(
        httpFunctions.some(
          (fn) =>
            fn.methods.includes(request.method as never) && routePattern(fn.route).test(pathOf(request.url)),
        ),
        `${request.method} ${request.url} matches no function`,
      ).toBe(true);
  });

  describe('played against the local runtime', () => {
    let runtime: LocalRuntime;
    // The MCP server the file's {{mcpServerUrl}} names: a real one on loopback, with the tool its requests list.
    let mcpServer: TestMcpServer;
    beforeAll(async () => {
      mcpServer = await startTestMcpServer((server) => {
        server.registerTool(
          'get_weather',
          { description: 'The weather in a city.', inputSchema: z.object({ city: z.string() }) },
          ({ city }) => ({ content: [{ type: 'text', text: `Sunny in ${city}.` }] }),
        );
      });
      runtime = await startTestRuntime();
    });
    afterAll(async () => {
      await runtime?.stop();
      await mcpServer?.stop();
    });

    it('answers every request with success, in order', async () => {
      const responses = new Map<string, unknown>();
      const substitute = (value: string) =>
        value.replace(/\{\{([^}]+)\}\}/g, (_all, expression: string) => {
          if (expression === 'baseUrl') return runtime.url;
          if (expression === '$guid') return randomUUID();
          if (expression === 'mcpServerUrl') return mcpServer.url;
          const fileVariable = variables.get(expression);
          if (fileVariable !== undefined) return fileVariable;
          const [requestName, , , ...path] = expression.split('.');
          let found = responses.get(requestName!);
          // A JSONPath as the clients read it: `$.data[0].id` is `data`, `0`, `id` from the body.
          const keys = path
            .filter((key) => key !== '$')
            .flatMap((key) => key.split(/\[(\d+)\]/).filter(Boolean));
          for (const key of keys) found = (found as Record<string, unknown> | undefined)?.[key];
          if (typeof found !== 'string')
            throw new Error(`api.http names {{${expression}}}, which is not there`);
          return found;
        });
      for (const request of requests) {
        const response = await fetch(substitute(request.url), {
          method: request.method,
          headers: Object.fromEntries(request.headers.map(([name, value]) => [name, substitute(value)])),
          ...(request.body.trim() === '' ? {} : { body: substitute(request.body) }),
        });
        const body = await response.text(); // an SSE stream is read to its end: the turn finishes
        if (request.expect === undefined)
          expect(response.status, `${request.method} ${request.url}: ${body}`).toBeLessThan(300);
        else expect(response.status, `${request.method} ${request.url}: ${body}`).toBe(request.expect);
        if (request.name !== undefined) responses.set(request.name, JSON.parse(body) as unknown);
        if (response.headers.get('content-type')?.startsWith('text/event-stream'))
          // Our events end with message-end; the AI SDK's UI message stream with its finish chunk and [DONE].
          expect(body).toMatch(
            response.headers.get('x-vercel-ai-ui-message-stream') === 'v1'
              ? /"type":"finish"[\s\S]*data: \[DONE\]/
              : /event: message-end/,
          );
      }
    });
  });
});
