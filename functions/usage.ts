// The Usage API: what the caller's model calls used and cost over a range of days, by day, conversation or model,
// with the background work (titles, summaries, profile, embeddings, ingestion) shown apart from the chat's rounds.
import { z } from 'zod';
import { userIdSchema } from '../shared/ids.js';
import { usageQuerySchema, usageReportSchema } from '../shared/usage/contracts.js';
import { usageReport } from '../shared/usage/usage-report.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

export const getUsageEndpoint = endpoint({
  name: 'getUsage',
  route: 'usage/users/{userId}',
  methods: ['GET'],
  summary:
    "The caller's tokens and US dollars over ?from=&to= (UTC days, both included; default this month so far, at most 366 days), ?groupBy=day|conversation|model (default day): the chat's rounds (`turns`) and the background work (`background`, and `backgroundByKind`) apart, and `storage`: the bytes the caller keeps in attachments now, against QUOTA_ATTACHMENT_BYTES.",
  auth: 'caller',
  responses: {
    200: '{userId, from, to, groupBy, currency, turns, background, total, backgroundByKind, groups, storage}',
  },
  replies: { 200: usageReportSchema },
  params: z.object({ userId: userIdSchema }),
  query: usageQuerySchema,
  async handle({ app, caller, query }) {
    const [report, attachmentBytes] = await Promise.all([
      usageReport(app.usage.ledger, caller.userId, query),
      app.attachments.store.usedBytes(caller.userId),
    ]);
    const storage = { attachmentBytes, attachmentQuotaBytes: app.attachments.config.quotaBytes };
    return { status: 200, body: { ...report, storage } };
  },
});

export const usageFunctions: FunctionDefinition[] = [httpFunction(getUsageEndpoint)];
