// Writes docs/api.md from the endpoint declarations in the function table: per area, each route's method, auth,
// summary, fields (types read from the zod schemas) and statuses, beside the notes in scripts/api-doc-notes.ts.
// Run after changing an endpoint: npm run generate
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import type { z } from 'zod';
import { API_AREAS } from '../functions/api-areas.js';
import { functionDefinitions } from '../functions/table.js';
import type { App } from '../shared/app/app.js';
import { loadConfig } from '../shared/app/config.js';
import {
  bytes,
  declaredEndpoints,
  endpointStatuses,
  inputJsonSchema,
  isSuccessStatus,
  outputJsonSchema,
  replyContent,
  resolvedBody,
  type DeclaredEndpoint,
  type JsonSchema,
} from '../shared/http/declared-endpoints.js';
import type { EndpointAuth } from '../shared/http/endpoint.js';
import { apiAreaOf, type ApiTag } from '../shared/http/openapi.js';
import { API_INTRO } from './api-doc-notes.js';
import { buildSampleSettings } from './generate-definitions.js';

export const API_DOCS_PATH = fileURLToPath(new URL('../docs/api.md', import.meta.url));

const UUID_PATTERN = /^\^\(\?:\[0-9a-fA-F\]\{8\}-/;
/** The alternative a session or chat message id's pattern has for the AI SDK's 16-character ids. */
const AI_SDK_ID_ALTERNATIVE = '|[A-Za-z0-9]{16}';

type DocumentedEndpoint = DeclaredEndpoint<App>;

/**
 * Body schemas and limits that follow settings are functions of the app; they read only its configuration, so
 * the page shows them with every setting at its default. The endpoints below are placeholders the local runtime
 * would fill in: no limit reads them.
 */
export function documentationApp(): App {
  const env = {
    ...buildSampleSettings().Values,
    COSMOS_ENDPOINT: 'https://localhost:8081/',
    WEBPUBSUB_ENDPOINT: 'http://localhost:7071/webpubsub',
    LLM_PROVIDER: 'openai-compatible',
    LLM_BASE_URL: 'http://localhost:7071/offline-model/v1',
    LLM_CHAT_MODEL: 'chat',
    LLM_EMBEDDING_MODEL: 'embedding',
  };
  return { config: loadConfig(env) } as unknown as App;
}

function documentedEndpoints(): DocumentedEndpoint[] {
  return declaredEndpoints<App>(functionDefinitions);
}

const areaOf = (endpoint: DocumentedEndpoint): ApiTag => apiAreaOf(endpoint, API_AREAS);

/** Prose from a declaration, with `<` escaped so that `<new id>` is not read as an HTML tag. */
const prose = (text: string) => text.replace(/</g, '\\<');
/** Text safe in a Markdown table cell. */
const cell = (text: string) =>
  prose(text)
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' ');
const code = (text: string) => '`' + text + '`';

/** One field's type in a few words: `string (UUID)`, `integer, 1–100, default 20`, `"asc" | "desc"`. */
export function describeType(schema: JsonSchema): string {
  const variants = schema.anyOf ?? schema.oneOf;
  let text: string;
  if (variants !== undefined) text = variants.map(describeType).join(' | ');
  else if (schema.const !== undefined) text = JSON.stringify(schema.const);
  else if (schema.enum !== undefined) text = schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  else {
    const type = Array.isArray(schema.type) ? schema.type.join(' | ') : (schema.type ?? 'any');
    const limits: string[] = [];
    if (type === 'array' && schema.items !== undefined) text = `${describeType(schema.items)}[]`;
    else text = type;
    // A described value (a page size in a query string, say) reads better than the pattern that checks it.
    if (schema.pattern !== undefined && schema.description === undefined)
      limits.push(
        UUID_PATTERN.test(schema.pattern)
          ? schema.pattern.includes(AI_SDK_ID_ALTERNATIVE)
            ? 'UUID or AI SDK id'
            : 'UUID'
          : `matching ${code(schema.pattern)}`,
      );
    if (schema.format !== undefined) limits.push(schema.format);
    if (schema.minLength !== undefined || schema.maxLength !== undefined)
      limits.push(`${range(schema.minLength, schema.maxLength)} characters`);
    const minimum = schema.minimum ?? schema.exclusiveMinimum;
    if (minimum !== undefined || schema.maximum !== undefined) limits.push(range(minimum, schema.maximum));
    if (schema.maxItems !== undefined) limits.push(`at most ${schema.maxItems}`);
    if (limits.length > 0) text += ` (${limits.join(', ')})`;
  }
  if (schema.default !== undefined) text += `, default ${JSON.stringify(schema.default)}`;
  return text;
}

function range(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return `${min}–${max}`;
  if (max !== undefined) return `at most ${max}`;
  return `at least ${min}`;
}

interface FieldRow {
  part: string;
  name: string;
  type: string;
  required: boolean;
  description?: string | undefined;
}

function fieldRows(part: string, schema: z.ZodType | undefined): FieldRow[] {
  if (schema === undefined) return [];
  const json = inputJsonSchema(schema);
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {})
    .filter(([, property]) => Object.keys(property).length > 0)
    .map(([name, property]) => ({
      part,
      name,
      type: describeType(property),
      required: required.has(name),
      description: property.description,
    }));
}

const AUTH: Record<EndpointAuth, string> = {
  caller: 'caller',
  anonymous: 'anyone',
  'caller-or-ticket': 'caller or ticket',
};

/** The auth column: a route that also takes personal API keys says so. */
function authLabel(declaration: DocumentedEndpoint['declaration']): string {
  return declaration.apiKeys === true ? `${AUTH[declaration.auth]} or API key` : AUTH[declaration.auth];
}

const statuses = endpointStatuses<App>;
const isSuccess = isSuccessStatus;

function endpointTitle(endpoint: DocumentedEndpoint): string {
  return `${endpoint.methods.join(', ')} /api/${endpoint.route}`;
}

function endpointSection(endpoint: DocumentedEndpoint, app: App): string {
  const { declaration } = endpoint;
  const lines = [`### ${code(endpointTitle(endpoint))}`, '', prose(declaration.summary), ''];
  const body = resolvedBody(declaration, app);
  const fields = [
    ...fieldRows('path', declaration.params),
    ...fieldRows('query', declaration.query),
    ...fieldRows('body', body?.schema),
  ];
  if (body !== undefined) {
    const kinds = body.multipart ? 'JSON or `multipart/form-data`' : 'JSON';
    lines.push(`Body: ${kinds}, at most ${bytes(body.maxBytes)}${body.optional ? ', optional' : ''}.`, '');
  }
  if (declaration.apiKeys === true)
    lines.push(
      'Also takes a personal API key (`Authorization: Bearer cmk_...`, see [api-keys.md](api-keys.md)), acting as its owner.',
      '',
    );
  if (declaration.auth === 'caller-or-ticket')
    lines.push(
      "Opened with the caller's identity, or with the ticket in the `stream` URL `POST /api/chat` answers (no header needed).",
      '',
    );
  if (fields.length > 0) {
    lines.push('| in | field | type | required |', '| --- | --- | --- | --- |');
    for (const field of fields)
      lines.push(
        `| ${field.part} | ${code(field.name)} | ${cell(field.type + (field.description === undefined ? '' : `: ${field.description}`))} | ${field.required ? 'yes' : 'no'} |`,
      );
    lines.push('');
  }
  lines.push('| status | meaning | body |', '| --- | --- | --- |');
  for (const [status, meaning] of statuses(endpoint, app))
    lines.push(`| ${status} | ${cell(meaning)} | ${cell(replyText(endpoint, status))} |`);
  lines.push('');
  return lines.join('\n');
}

/**
 * What a status answers with, as the OpenAPI document shows it: each media type of its declared reply with a JSON
 * object's top-level fields (`?` when optional), problem details for an undeclared error, nothing for the rest.
 */
function replyText(endpoint: DocumentedEndpoint, status: number): string {
  const reply = endpoint.declaration.replies?.[status];
  if (reply === undefined)
    return isSuccess(status)
      ? ''
      : endpoint.declaration.errors === 'openai'
        ? 'OpenAI error'
        : 'problem+json';
  return Object.entries(replyContent(reply))
    .map(([mediaType, schema]) => {
      const json = outputJsonSchema(schema);
      const required = new Set(json.required ?? []);
      const fields = Object.keys(json.properties ?? {}).map((name) =>
        required.has(name) ? name : `${name}?`,
      );
      return fields.length === 0 ? mediaType : `${mediaType} {${fields.join(', ')}}`;
    })
    .join(' or ');
}

function areaTable(endpoints: DocumentedEndpoint[], app: App): string {
  const lines = ['| endpoint | auth | what it does | success | errors |', '| --- | --- | --- | --- | --- |'];
  for (const endpoint of endpoints) {
    const all = statuses(endpoint, app).map(([status]) => status);
    lines.push(
      `| ${code(endpointTitle(endpoint))} | ${authLabel(endpoint.declaration)} | ${cell(endpoint.declaration.summary)} | ${all.filter(isSuccess).join(', ')} | ${all.filter((s) => !isSuccess(s)).join(', ')} |`,
    );
  }
  return lines.join('\n') + '\n';
}

/** Pure but for prettier: the page for the endpoints as they are declared now. */
export async function buildApiDocs(): Promise<string> {
  const app = documentationApp();
  const endpoints = documentedEndpoints();
  // Every endpoint has an area: areaOf throws otherwise, naming the endpoint.
  for (const endpoint of endpoints) areaOf(endpoint);
  const sections = [
    '# HTTP API reference',
    '',
    '<!-- Generated from the endpoint declarations in functions/ by scripts/generate-api-docs.ts (notes: scripts/api-doc-notes.ts). Do not edit: run `npm run generate`. -->',
    '',
    API_INTRO,
    '',
    'Auth: **caller**, the caller identified by the platform (or a dev identity locally); **anyone**, no identity; **caller or ticket**, the caller or a stream ticket; **or API key**, also a personal API key. Limits shown are the defaults of their settings.',
    '',
  ];
  for (const area of API_AREAS) {
    const own = endpoints.filter((endpoint) => areaOf(endpoint) === area);
    if (own.length === 0) continue;
    sections.push(`## ${area.title}`, '', area.note, '', areaTable(own, app));
    for (const endpoint of own) sections.push(endpointSection(endpoint, app));
  }
  const options = (await resolveConfig(API_DOCS_PATH)) ?? {};
  return format(sections.join('\n'), { ...options, filepath: API_DOCS_PATH });
}

async function main(): Promise<void> {
  await writeFile(API_DOCS_PATH, await buildApiDocs());
  console.log(`Wrote ${path.relative(process.cwd(), API_DOCS_PATH)}`);
}

// Importing this module (the drift test does) must not write anything.
const invokedDirectly =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) await main();
