// A plain HTML rendering of the OpenAPI document, for reading the API in a browser with nothing to download:
// per tag, each operation with its parameters, body schemas and statuses. Every text from the document is escaped.
import type { OpenApiDocument } from './openapi.js';

/** No script and nothing fetched: the page is text and one inline style sheet. */
export const API_PAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'";

type Json = Record<string, unknown>;

const METHODS = ['get', 'head', 'put', 'post', 'delete', 'patch'] as const;

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Prose from the document: escaped, with its Markdown `code` spans shown as code rather than as backticks. */
export function escapeProse(text: string): string {
  return escapeHtml(text).replace(/`([^`\n]+)`/g, '<code>$1</code>');
}

const object = (value: unknown): Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

interface Operation {
  method: string;
  path: string;
  body: Json;
}

export function renderOpenApiPage(document: OpenApiDocument, documentUrl: string): string {
  const info = object(document['info']);
  const operations: Operation[] = Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => ({
      method,
      path,
      body: object(item[method]),
    })),
  );
  const sections = list(document['tags']).map((tag) => {
    const name = text(object(tag)['name']);
    const own = operations.filter((operation) => list(operation.body['tags']).includes(name));
    return [
      `<section><h2>${escapeHtml(name)}</h2>`,
      `<p>${escapeProse(text(object(tag)['description']))}</p>`,
      ...own.map(renderOperation),
      '</section>',
    ].join('\n');
  });
  const title = `${text(info['title'])} ${text(info['version'])}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1b; }
h3 { font-family: ui-monospace, monospace; font-size: 1rem; margin-top: 2rem; }
.method { text-transform: uppercase; padding: 0 .4em; border-radius: 3px; background: #e8eef7; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
td, th { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
pre { background: #f6f8fa; padding: .5rem; overflow-x: auto; font-size: 13px; }
details { margin: .25rem 0; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>${escapeProse(text(info['description']))}</p>
<p>The OpenAPI ${escapeHtml(text(document['openapi']))} document: <a href="${escapeHtml(documentUrl)}">${escapeHtml(documentUrl)}</a>.</p>
${sections.join('\n')}
</body>
</html>
`;
}

function renderOperation({ method, path, body }: Operation): string {
  const lines = [
    `<h3 id="${escapeHtml(text(body['operationId']))}"><span class="method">${method}</span> ${escapeHtml(path)}</h3>`,
    `<p>${escapeProse(text(body['summary']))}</p>`,
    `<p>Auth: ${escapeHtml(securityText(list(body['security'])))}</p>`,
  ];
  const parameters = list(body['parameters']).map(object);
  if (parameters.length > 0) {
    lines.push('<table><tr><th>in</th><th>name</th><th>required</th><th>schema</th><th>about</th></tr>');
    for (const parameter of parameters)
      lines.push(
        `<tr><td>${escapeHtml(text(parameter['in']))}</td><td><code>${escapeHtml(text(parameter['name']))}</code></td>` +
          `<td>${parameter['required'] === true ? 'yes' : 'no'}</td><td><code>${escapeHtml(JSON.stringify(parameter['schema']))}</code></td>` +
          `<td>${escapeProse(text(parameter['description']))}</td></tr>`,
      );
    lines.push('</table>');
  }
  const requestBody = object(body['requestBody']);
  for (const [type, media] of Object.entries(object(requestBody['content'])))
    lines.push(
      `<details><summary>Body: ${escapeHtml(type)}${requestBody['required'] === true ? '' : ' (optional)'}. ${escapeProse(text(requestBody['description']))}</summary>`,
      `<pre>${escapeHtml(JSON.stringify(object(media)['schema'], null, 2))}</pre></details>`,
    );
  lines.push('<table><tr><th>status</th><th>meaning</th><th>body</th></tr>');
  for (const [status, response] of Object.entries(object(body['responses']))) {
    const content = object(object(response)['content']);
    const schemas = Object.entries(content).map(
      ([type, media]) =>
        `<details><summary>${escapeHtml(type)}</summary><pre>${escapeHtml(JSON.stringify(object(media)['schema'], null, 2))}</pre></details>`,
    );
    lines.push(
      `<tr><td>${escapeHtml(status)}</td><td>${escapeProse(text(object(response)['description']))}</td><td>${schemas.join('')}</td></tr>`,
    );
  }
  lines.push('</table>');
  return lines.join('\n');
}

function securityText(requirements: unknown[]): string {
  if (requirements.length === 0) return 'anyone';
  return requirements
    .map((requirement) =>
      Object.entries(object(requirement))
        .map(([scheme, scopes]) =>
          list(scopes).length > 0 ? `${scheme} (${list(scopes).join(', ')})` : scheme,
        )
        .join(' and '),
    )
    .join(' or ');
}
