// Hostile documents end to end with lowered reading budgets: user_001's PDF becomes ready and /api/health answers
// while user_002's nested-forms PDF runs out its time; the bomb and a Markdown quoted 50,000 deep then fail with
// reasons their owner reads, each settled on its first delivery and not delivered again.
import type { InvocationContext } from '@azure/functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalRuntime } from '../../local/runtime.js';
import type { DocumentView } from '../../shared/knowledge/contracts.js';
import { DEV_IDENTITY_HEADER, expectStatus } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import { makeNestedFormsPdf } from '../support/make-pdf-bombs.js';
import { makePdf } from '../support/make-pdf.js';

const HEAVY = 180_000;

describe('hostile documents over the local runtime', () => {
  let runtime: LocalRuntime;
  /** The deliveries of each document's ingestion message. */
  const deliveries = new Map<string, number>();

  beforeAll(async () => {
    const functions: FunctionDefinition[] = functionDefinitions.map((definition) =>
      definition.kind === 'serviceBus' && definition.name === 'knowledgeWorker'
        ? {
            ...definition,
            handler: async (message: unknown, context: InvocationContext) => {
              const { documentId } = message as { documentId: string };
              deliveries.set(documentId, (deliveries.get(documentId) ?? 0) + 1);
              await definition.handler(message, context);
            },
          }
        : definition,
    );
    runtime = await startTestRuntime({
      functions,
      settings: {
        KNOWLEDGE_READ_WORKERS: '2',
        KNOWLEDGE_READ_TIMEOUT_MS: '15000',
        KNOWLEDGE_MAX_NESTING: '64',
      },
    });
  }, HEAVY);
  afterAll(async () => {
    await runtime?.stop();
  });

  const call = (user: string, path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}/api/knowledge/${path}`, {
      ...init,
      headers: { [DEV_IDENTITY_HEADER]: user, ...(init.headers as Record<string, string>) },
    });

  async function upload(
    user: string,
    content: Uint8Array,
    fileName: string,
    type: string,
  ): Promise<DocumentView> {
    const form = new FormData();
    form.append('file', new Blob([content], { type }), fileName);
    const response = await call(user, 'documents', { method: 'POST', body: form });
    return (await expectStatus<{ document: DocumentView }>(response, 202)).document;
  }

  async function current(user: string, documentId: string): Promise<DocumentView> {
    return (await expectStatus<{ document: DocumentView }>(await call(user, `documents/${documentId}`), 200))
      .document;
  }

  /** Polls until the document's status is one of `statuses`, as a client would. */
  async function reaches(
    user: string,
    documentId: string,
    statuses: readonly string[],
  ): Promise<DocumentView> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const document = await current(user, documentId);
      if (statuses.includes(document.status)) return document;
      if (Date.now() > deadline) throw new Error(`document ${documentId} is still ${document.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it(
    "makes user_001's small PDF ready and answers /api/health while user_002's bomb holds a worker",
    async () => {
      // Both workers started first (one owner runs at most one of two), so neither start is in what follows.
      await Promise.all(
        ['user_001', 'user_003'].map(async (user) => {
          const warm = await upload(
            user,
            new TextEncoder().encode(`Warm-up by ${user}.`),
            'warm.txt',
            'text/plain',
          );
          await reaches(user, warm.documentId, ['ready']);
        }),
      );

      const bomb = await upload('user_002', makeNestedFormsPdf(12, 8), 'forms.pdf', 'application/pdf');
      await reaches('user_002', bomb.documentId, ['processing']);
      const small = await upload(
        'user_001',
        makePdf([['Parental leave lasts sixteen weeks.']]),
        'leave.pdf',
        'application/pdf',
      );

      expect(await reaches('user_001', small.documentId, ['ready', 'failed'])).toMatchObject({
        status: 'ready',
        chunkCount: 1,
      });
      const health = await fetch(`${runtime.url}/api/health`);
      expect(health.status).toBe(200);
      expect((await current('user_002', bomb.documentId)).status).toBe('processing');

      const failed = await reaches('user_002', bomb.documentId, ['ready', 'failed']);
      expect(failed).toMatchObject({
        status: 'failed',
        failure: {
          code: 'too_slow',
          reason: 'The document could not be read: it took longer than 15 seconds to read.',
        },
      });
      expect(deliveries.get(bomb.documentId)).toBe(1);
      expect(deliveries.get(small.documentId)).toBe(1);
    },
    HEAVY,
  );

  it(
    'fails Markdown quoted 50,000 levels deep as too deeply nested, on its first delivery',
    async () => {
      const deep = await upload(
        'user_002',
        new TextEncoder().encode(`${'> '.repeat(50_000)}Quoted.`),
        'deep.md',
        'text/markdown',
      );

      expect(await reaches('user_002', deep.documentId, ['ready', 'failed'])).toMatchObject({
        status: 'failed',
        failure: {
          code: 'too_nested',
          reason:
            'The document could not be read: it is too deeply nested (more than 64 levels of quotes, lists or elements).',
        },
      });
      expect(deliveries.get(deep.documentId)).toBe(1);
    },
    HEAVY,
  );
});
