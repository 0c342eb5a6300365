// The caller's data: "download all my data" (a job that writes one archive, its status and its download) and
// "delete all my data" (erased everywhere it lives); with the archive job's orchestration and activities.
import type { InvocationContext } from '@azure/functions';
import type * as df from 'durable-functions';
import { z } from 'zod';
import {
  expireExport,
  exportStatus,
  failExport,
  openArchive,
  requestExport,
  writeExport,
} from '../shared/account/account-export.js';
import {
  ACCOUNT_EXPORT_ACTIVITIES,
  ACCOUNT_EXPORT_ORCHESTRATION,
  exportFailureInputSchema,
  exportIdSchema,
  exportJobInputSchema,
  exportViewSchema,
} from '../shared/account/contracts.js';
import { accountExportOrchestrator } from '../shared/account/export-orchestration.js';
import { getApp, type App } from '../shared/app/app.js';
import { eraseUser } from '../shared/app/user-eraser.js';
import { userIdSchema } from '../shared/ids.js';
import { parseInput } from '../shared/validation.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

const exportParamsSchema = z.object({ userId: userIdSchema, exportId: exportIdSchema });

export const deleteUserDataEndpoint = endpoint({
  name: 'deleteUserData',
  route: 'account/users/{userId}/data',
  methods: ['DELETE'],
  summary:
    'Erases everything of the caller: each conversation as its own delete does (a running turn writes nothing back), long-term memory, knowledge documents and their chunks, attachments, data archives, MCP servers, API keys, assistants, projects, shares and quota counters; usage records as ERASE_USAGE_RECORDS says. Idempotent: again, it finds nothing.',
  auth: 'caller',
  responses: { 204: 'erased' },
  usesDurableClient: true,
  params: z.object({ userId: userIdSchema }),
  async handle({ app, caller, context }) {
    const erased = await eraseUser(
      {
        database: app.account.database,
        conversations: {
          ...app.history,
          memory: app.memory,
          orchestrations: app.orchestrations(context),
          stops: app.chat.cancellations,
        },
        memory: app.memory,
        knowledge: app.knowledge,
        attachments: app.attachments.store,
        exports: { ...app.account.exports, orchestrations: app.orchestrations(context) },
        usageRecords: app.account.settings.eraseUsageRecords,
      },
      caller.userId,
    );
    context.log(`Erased the data of ${caller.userId}:`, erased);
    return { status: 204 };
  },
});

export const requestExportEndpoint = endpoint({
  name: 'requestAccountExport',
  route: 'account/users/{userId}/export',
  methods: ['POST'],
  summary:
    '"Download all my data": starts a job that writes one archive (a gzip\'d tar) of the caller\'s conversations, memory, knowledge documents and attachments. Poll its status at the Location it answers with.',
  auth: 'caller',
  responses: { 202: 'the job started: its status, and where to read it' },
  replies: { 202: exportViewSchema },
  usesDurableClient: true,
  params: z.object({ userId: userIdSchema }),
  async handle({ app, caller, context }) {
    const started = await requestExport(
      { ...app.account.exports, orchestrations: app.orchestrations(context) },
      caller.userId,
    );
    return {
      status: 202,
      body: started,
      headers: { location: `/api/account/users/${caller.userId}/export/${started.exportId}` },
    };
  },
});

export const exportStatusEndpoint = endpoint({
  name: 'accountExportStatus',
  route: 'account/users/{userId}/export/{exportId}',
  methods: ['GET'],
  summary:
    "A data archive's status (running, ready, failed) and, once ready, a short-lived link: this API's archive route (ACCOUNT_EXPORT_LINK=app) or a user delegation SAS to the blob (sas).",
  auth: 'caller',
  responses: { 200: 'the status', 404: "an unknown or expired archive, or another user's" },
  replies: { 200: exportViewSchema },
  params: exportParamsSchema,
  async handle({ app, caller, params }) {
    return { status: 200, body: await exportStatus(app.account.exports, caller.userId, params.exportId) };
  },
});

export const downloadExportEndpoint = endpoint({
  name: 'downloadAccountExport',
  route: 'account/users/{userId}/export/{exportId}/archive',
  methods: ['GET'],
  summary: "A ready data archive's bytes (application/gzip, a tar inside), streamed to its owner.",
  auth: 'caller',
  responses: {
    200: 'the archive',
    404: "an unknown or expired archive, or another user's",
    409: 'the archive is not ready (still running, or failed)',
  },
  replies: { 200: { content: { 'application/gzip': z.string() } } },
  params: exportParamsSchema,
  async handle({ app, caller, params }) {
    const file = await openArchive(app.account.exports, caller.userId, params.exportId);
    return {
      status: 200,
      stream: file.body,
      headers: {
        'content-type': 'application/gzip',
        'content-length': String(file.bytes),
        'content-disposition': `attachment; filename="${file.fileName}"`,
        'x-content-type-options': 'nosniff',
        'cache-control': 'private, no-store',
      },
    };
  },
});

/** The archive job's services: the account's, with what the archive reads from each area. */
function exportJob(app: App) {
  return {
    ...app.account.exports,
    sources: {
      history: app.history,
      memory: app.memory,
      knowledge: { documents: app.knowledge.documents, text: app.account.knowledgeText },
      attachments: app.attachments.store,
    },
  };
}

function exportActivity(
  name: string,
  run: (app: App, value: unknown, context: InvocationContext) => Promise<unknown>,
): FunctionDefinition {
  const handler: df.ActivityHandler = async (value: unknown, context: InvocationContext) =>
    run(await getApp(), value, context);
  return { kind: 'activity', name, handler };
}

export const accountFunctions: FunctionDefinition[] = [
  httpFunction(deleteUserDataEndpoint),
  httpFunction(requestExportEndpoint),
  httpFunction(exportStatusEndpoint),
  httpFunction(downloadExportEndpoint),
  { kind: 'orchestration', name: ACCOUNT_EXPORT_ORCHESTRATION, handler: accountExportOrchestrator },
  exportActivity(ACCOUNT_EXPORT_ACTIVITIES.write, async (app, value, context) => {
    const input = parseInput(exportJobInputSchema, value, 'data archive job');
    const counts = await writeExport(exportJob(app), input);
    context.log(`Data archive ${input.exportId} of ${input.userId}:`, counts ?? 'nothing to write');
    return counts ?? null;
  }),
  exportActivity(ACCOUNT_EXPORT_ACTIVITIES.fail, async (app, value, context) => {
    const { reason, ...input } = parseInput(exportFailureInputSchema, value, 'data archive failure');
    context.error(`Data archive ${input.exportId} of ${input.userId} failed: ${reason}`);
    await failExport(app.account.exports, input, reason);
    return null;
  }),
  exportActivity(ACCOUNT_EXPORT_ACTIVITIES.expire, async (app, value) => {
    await expireExport(app.account.exports, parseInput(exportJobInputSchema, value, 'data archive expiry'));
    return null;
  }),
];
