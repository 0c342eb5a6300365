// Long-term memory to take away and bring back: the caller's facts and summaries as NDJSON, and an import of that
// file (or of plain statements) merged into the caller's profile, with a dry run.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { userIdSchema } from '../shared/ids.js';
import { formFile } from '../shared/http/upload-body.js';
import {
  exportMemory,
  importMemory,
  MAX_IMPORT_BYTES,
  memoryImportBodySchema,
  memoryImportQuerySchema,
  memoryImportResultSchema,
} from '../shared/memory/memory-transfer.js';
import { withUsage } from '../shared/usage/usage-scope.js';
import type { FunctionDefinition } from './definition.js';
import { memoryScopeAccess } from '../shared/app/workspace.js';
import type { MemoryScope } from '../shared/conversation/memory-scope.js';
import { endpoint, httpFunction } from './endpoint.js';

const userParamsSchema = z.object({ userId: userIdSchema });

const importFormParts = z.object({
  file: z.file().describe('an NDJSON file in the export format (application/x-ndjson)'),
});

/** A form upload as the body schema reads it: the `file` part's text. */
async function importFromForm(form: FormData): Promise<unknown> {
  const file = await formFile(form, 'file');
  return file === undefined ? {} : { ndjson: new TextDecoder().decode(file.content) };
}

export const exportMemoryEndpoint = endpoint({
  name: 'exportMemory',
  route: 'memory/users/{userId}/export',
  methods: ['GET'],
  summary:
    "The caller's long-term memory as NDJSON: one line per profile fact (every status, with scope, provenance and validity) and per conversation summary (with scope and its sessionId).",
  auth: 'caller',
  responses: { 200: 'the lines, application/x-ndjson' },
  replies: { 200: { content: { 'application/x-ndjson': z.string() } } },
  params: userParamsSchema,
  async handle({ app, caller }) {
    return {
      status: 200,
      text: await exportMemory(app.memory, caller.userId),
      headers: {
        'content-type': 'application/x-ndjson; charset=utf-8',
        'content-disposition': 'attachment; filename="memory.ndjson"',
        'cache-control': 'no-store',
      },
    };
  },
});

export const importMemoryEndpoint = endpoint({
  name: 'importMemory',
  route: 'memory/users/{userId}/import',
  methods: ['POST'],
  summary:
    "Merges memories into the caller's profile as a turn's would be, with provenance `import`: a multipart `file` in the export's NDJSON format (its active facts; no model call), or JSON {statements} (sorted into categories by the memory model, its usage counted). ?dryRun=true answers what would change and writes nothing; importing the same again changes nothing. Each fact line keeps its scope (a scope not the caller's is a 404); ?scope= says where statements go.",
  auth: 'caller',
  responses: {
    200: '{dryRun, changes, unchanged, skipped, dropped}',
    404: "a scope that is not the caller's",
    413: 'over 1 MiB',
  },
  replies: { 200: memoryImportResultSchema },
  params: userParamsSchema,
  query: memoryImportQuerySchema,
  body: {
    schema: memoryImportBodySchema,
    maxBytes: MAX_IMPORT_BYTES,
    what: 'memory import',
    multipart: importFromForm,
    formParts: importFormParts,
  },
  async handle({ app, caller, query, body, context }) {
    const access = memoryScopeAccess(app.workspace);
    const services = {
      ...app.memory,
      llm: app.memory.worker.llm,
      access: (scope: MemoryScope) => access(caller, scope),
    };
    // Each import is its own job: its model call (statements only) recorded under the caller once.
    const job = `memory-import:${randomUUID()}`;
    const result = await withUsage({ userId: caller.userId, job, ownRecord: true, log: context }, () =>
      importMemory(services, caller.userId, body, { dryRun: query.dryRun, scope: query.scope }),
    );
    return { status: 200, body: result satisfies z.input<typeof memoryImportResultSchema> };
  },
});

export const memoryTransferFunctions: FunctionDefinition[] = [
  httpFunction(exportMemoryEndpoint),
  httpFunction(importMemoryEndpoint),
];
