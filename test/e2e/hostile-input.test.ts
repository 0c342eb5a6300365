// The hostile-input suite: while /api/health is polled and memory sampled, an attacker fires the corpus of
// hostile-corpus.ts at the local runtime; each entry must get its answer, none a 5xx, and the control user's
// conversation, fact and document must survive with every container answering. Latency and memory are printed.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceBusFunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { KNOWLEDGE_INGEST_QUEUE, type DocumentView } from '../../shared/knowledge/contracts.js';
import { knowledgeSettings } from '../../shared/knowledge/settings.js';
import { newFactId } from '../../shared/memory/consolidate-turn.js';
import { ChatClient, DEV_IDENTITY_HEADER } from '../support/chat-client.js';
import {
  forEachBounded,
  percentile,
  residentBytes,
  sampleHealth,
  sampleMemory,
  sendRaw,
  type HealthSample,
  type RawAnswer,
  type RawRequest,
} from '../support/hostile-client.js';
import {
  ATTACKER,
  CONTROL,
  ENTRA,
  hostileCorpus,
  identityCorpus,
  type CorpusTargets,
  type IdentityTargets,
  type HostileEntry,
  type HostileUpload,
} from '../support/hostile-corpus.js';
import { startTestRuntime, settle } from '../support/local-runtime.js';
import { factSource, profileFact, storeFacts } from '../support/memory-fixtures.js';

/**
 * The document-reading budgets, lowered so hostile documents fail in seconds (5 s of reading leaves a worker room to
 * start on a busy machine; the stalling documents take 12 to 80 s unbounded). The first test checks the product
 * reads each of these settings, so a renamed one cannot silently leave a budget at its default.
 */
const READING_BUDGETS: readonly (readonly [name: string, value: string])[][] = [
  [['KNOWLEDGE_READ_TIMEOUT_MS', '5000']],
  [['KNOWLEDGE_READ_MEMORY_MB', '128']],
  [['KNOWLEDGE_MAX_INFLATED_MB', '8']],
  [['KNOWLEDGE_MAX_TEXT_CHARACTERS', '1000000']],
  [['KNOWLEDGE_READ_WORKERS', '2']],
];

/** Requests in flight at once. */
const CONCURRENCY = 4;
/** Longest wait for one answer: a request still unanswered after it counts as no answer. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Longest wait, once the whole corpus is sent, for each accepted hostile document to settle ready or failed. */
const DOCUMENTS_SETTLE_MS = 40_000;
/**
 * Resident memory the process (the local runtime and this test) may reach. Measured at 0.78 to 0.86 GB at peak with
 * the reading budgets above (two reading workers of 128 MB heap); unbounded, pdf.js alone reaches 1 GB inflating the
 * 256 MiB stream, and 0.75 GB drawing the nested XObjects.
 */
const RSS_BOUND_BYTES = 1.2 * 1024 ** 3;

/** A failure reason that is an engine's or a stack's words, not the product's. */
const INTERNAL_REASON =
  /Maximum call stack|RangeError|TypeError|ReferenceError|SyntaxError|Cannot read properties|is not a function|is not defined|out of memory|heap|ERR_[A-Z_]+|\bat \S+:\d+:\d+|\b(undefined|null|NaN)\b/;

interface Outcome {
  answer: RawAnswer;
  /** For an accepted upload: the document as it settled (or as it was at the deadline). */
  document?: DocumentView;
}

const isUpload = (built: RawRequest | HostileUpload): built is HostileUpload => 'bytes' in built;

const BOUNDARY = '----hostile-upload-5b2f9e';

function uploadRequest(upload: HostileUpload): RawRequest {
  const head =
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${upload.fileName}"\r\n` +
    `Content-Type: ${upload.contentType}\r\n\r\n`;
  return {
    method: 'POST',
    path: '/api/knowledge/documents',
    headers: {
      [DEV_IDENTITY_HEADER]: ATTACKER,
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
    },
    body: Buffer.concat([Buffer.from(head), upload.bytes, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]),
  };
}

function jsonOf<T>(answer: RawAnswer): T | undefined {
  try {
    return JSON.parse(answer.text) as T;
  } catch {
    return undefined;
  }
}

const describeAnswer = (answer: RawAnswer) =>
  answer.error !== undefined
    ? `no answer (${answer.error})`
    : `${answer.status} ${answer.text.slice(0, 240)}`;

/**
 * A health poll that answered 503 only because dependencies did not answer within health's own time budget: a
 * latency, which the suite reports and does not assert (on a busy machine the in-process stand-ins are slow too). A
 * 503 naming a dependency down for any other reason (a container gone, say) is a failure.
 */
function onlySlow(sample: HealthSample): boolean {
  if (sample.status !== 503 || sample.detail === undefined) return false;
  const report = jsonOf<{ dependencies?: Record<string, { status: string; detail?: string }> }>({
    status: 503,
    headers: {},
    text: sample.detail,
  });
  const down = Object.values(report?.dependencies ?? {}).filter((dependency) => dependency.status !== 'up');
  return (
    down.length > 0 && down.every((dependency) => /^no answer within \d+ ms$/.test(dependency.detail ?? ''))
  );
}

/** What is wrong with an entry's outcome; empty when it got its expected answer. */
function judge(entry: HostileEntry, outcome: Outcome | undefined, deliveries: number[]): string[] {
  if (outcome === undefined) return ['it was never sent (the firing did not finish)'];
  const { answer } = outcome;
  if (answer.error !== undefined || answer.status === 0) return [describeAnswer(answer)];
  const problems: string[] = [];
  const contentType = answer.headers['content-type'] ?? '';
  const expectation = entry.expect;
  const refusedAsProblem = () => {
    if (!contentType.startsWith('application/problem+json'))
      problems.push(`a ${answer.status} that is not application/problem+json (${contentType || 'no type'})`);
  };
  if (expectation.answer === 'status') {
    if (!expectation.status.includes(answer.status))
      problems.push(`answered ${describeAnswer(answer)}; expected ${expectation.status.join(' or ')}`);
    else if (answer.status >= 400 && answer.status < 500 && expectation.problemJson !== false)
      refusedAsProblem();
    const wrong = expectation.check?.(answer);
    if (wrong !== undefined) problems.push(wrong);
    return problems;
  }
  if (expectation.refused?.includes(answer.status)) {
    refusedAsProblem();
    return problems;
  }
  if (answer.status !== 202 && answer.status !== 200) {
    const refusal = expectation.refused ? `refused with ${expectation.refused.join(' or ')}, or ` : '';
    return [`upload answered ${describeAnswer(answer)}; expected it ${refusal}accepted (202)`];
  }
  if (
    expectation.refused !== undefined &&
    expectation.refused.length > 0 &&
    expectation.mayBeReady === undefined
  )
    problems.push(`the upload was accepted (${answer.status}); expected ${expectation.refused.join(' or ')}`);
  const document = outcome.document;
  if (document === undefined) return [...problems, 'the accepted document could not be read back'];
  if (document.status === 'failed') {
    const reason = document.failure?.reason ?? '';
    if (INTERNAL_REASON.test(reason) || reason.length < 20)
      problems.push(`failed with an internal reason: ${JSON.stringify(reason)}`);
    else if (!expectation.reason.test(reason))
      problems.push(
        `failed with ${JSON.stringify(reason)}, which does not say why as ${expectation.reason} does`,
      );
  } else if (document.status === 'ready') {
    const wrong = expectation.mayBeReady
      ? expectation.mayBeReady(document)
      : `it was indexed (ready, ${document.chunkCount ?? 0} chunks)`;
    if (wrong !== undefined) problems.push(wrong);
  } else {
    problems.push(`still ${document.status} ${DOCUMENTS_SETTLE_MS / 1000} s after the last upload`);
  }
  if (deliveries.length !== 1)
    problems.push(
      `its message was delivered ${deliveries.length} times (delivery counts ${deliveries.join(', ') || 'none'})`,
    );
  return problems;
}

describe('hostile input against the local runtime', () => {
  let runtime: LocalRuntime;
  let targets: CorpusTargets;
  /** The ingestion worker's deliveries, by document id (each with the delivery count Service Bus gave). */
  const deliveries = new Map<string, number[]>();
  const outcomes = new Map<string, Outcome>();
  let releaseWorkers: () => void = () => undefined;
  const shuttingDown = new Promise<void>((resolve) => (releaseWorkers = resolve));
  let healthLatencies: number[] = [];
  let healthFailures: string[] = [];
  let healthPolls = 0;
  /** Polls answered 503 only because a dependency did not answer within health's own time budget. */
  let healthSlow = 0;
  let peakRss = 0;
  let controlBefore: { messages: number; title: string };

  const as = (userId: string, path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}${path}`, {
      ...init,
      headers: { [DEV_IDENTITY_HEADER]: userId, ...(init.headers as Record<string, string> | undefined) },
    });

  beforeAll(async () => {
    // The ingestion worker as deployed, counting its deliveries; at shutdown a reading still running is let go
    // of, so the runtime stops at once (the test is over).
    const functions = functionDefinitions.map((definition) => {
      if (definition.kind !== 'serviceBus' || definition.name !== 'knowledgeWorker') return definition;
      const counted: ServiceBusFunctionDefinition = {
        ...definition,
        handler: (message, context) => {
          const documentId = (message as { documentId?: string }).documentId ?? '?';
          const count = Number(
            (context.triggerMetadata as { deliveryCount?: number } | undefined)?.deliveryCount,
          );
          deliveries.set(documentId, [
            ...(deliveries.get(documentId) ?? []),
            Number.isNaN(count) ? 1 : count,
          ]);
          const run = definition.handler(message, context);
          run.catch(() => undefined); // its failure is Service Bus's to see, unless the test is over
          return Promise.race([run, shuttingDown]);
        },
      };
      return counted;
    });
    runtime = await startTestRuntime({
      functions,
      settings: Object.fromEntries(READING_BUDGETS.flat()),
    });

    // The control user: a conversation (one answered turn), a fact and a ready document.
    const alice = new ChatClient(runtime.url, CONTROL);
    const sessionId = await alice.startSession();
    const chatMessageId = await alice.send(sessionId, 'Tell me about the life of a lighthouse keeper.');
    await alice.stream(sessionId, chatMessageId);
    const factId = newFactId(sessionId, chatMessageId, 0); // named as the memory worker names a fact
    await storeFacts(
      runtime.app.memory.facts,
      profileFact(CONTROL, factId, [factSource(sessionId, 3, chatMessageId)], {
        category: 'interests',
        statement: 'Is fascinated by lighthouses.',
      }),
    );
    const upload = await as(CONTROL, '/api/knowledge/documents', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        fileName: 'lighthouse.md',
        contentType: 'text/markdown',
        contentBase64: Buffer.from(
          '# Lighthouse keeping\n\n## Tide tables\n\nThe keeper reads the tide tables each dawn and trims the lamp.\n',
        ).toString('base64'),
      }),
    });
    expect(upload.status).toBe(202);
    const { document } = (await upload.json()) as { document: DocumentView };
    expect((await waitForDocument(CONTROL, document.documentId, 30_000)).status).toBe('ready');

    // The attacker's own conversation, whose ids fill the fields a request does not attack.
    const bob = new ChatClient(runtime.url, ATTACKER);
    const attackerSession = await bob.startSession();
    const attackerMessage = await bob.send(attackerSession, 'Hello there.');
    await bob.stream(attackerSession, attackerMessage);
    await settle(runtime);

    targets = {
      control: { userId: CONTROL, sessionId, chatMessageId, documentId: document.documentId, factId },
      attacker: { userId: ATTACKER, sessionId: attackerSession, chatMessageId: attackerMessage },
    };
    const conversation = (await (await as(CONTROL, `/api/history/conversations/${sessionId}`)).json()) as {
      title: string;
      messages: unknown[];
    };
    controlBefore = { messages: conversation.messages.length, title: conversation.title };
    expect(controlBefore.messages).toBe(2);
  }, 60_000);

  afterAll(async () => {
    releaseWorkers();
    await runtime?.stop();
  }, 30_000);

  async function waitForDocument(
    userId: string,
    documentId: string,
    withinMs: number,
  ): Promise<DocumentView> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const answer = await sendRaw(
        runtime.url,
        {
          method: 'GET',
          path: `/api/knowledge/documents/${documentId}`,
          headers: { [DEV_IDENTITY_HEADER]: userId },
        },
        REQUEST_TIMEOUT_MS,
      );
      const document = jsonOf<{ document: DocumentView }>(answer)?.document;
      if (document === undefined) throw new Error(`GET document ${documentId}: ${describeAnswer(answer)}`);
      if (document.status === 'ready' || document.status === 'failed' || Date.now() > deadline)
        return document;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('lowers budgets the product reads', () => {
    const known = new Set(Object.keys(knowledgeSettings));
    const unread = READING_BUDGETS.filter((names) => !names.some(([name]) => known.has(name))).map((names) =>
      names.map(([name]) => name).join(' / '),
    );
    expect(unread, 'reading budgets no setting reads').toEqual([]);
  });

  it('fires the corpus while /api/health is polled', async () => {
    const health = sampleHealth(runtime.url, 50);
    const loopDelay = monitorEventLoopDelay({ resolution: 20 });
    loopDelay.enable();
    const memory = sampleMemory(100);
    const accepted: { name: string; documentId: string }[] = [];
    try {
      await forEachBounded(hostileCorpus, CONCURRENCY, async (entry) => {
        const built = entry.build(targets);
        const answer = await sendRaw(
          runtime.url,
          isUpload(built) ? uploadRequest(built) : built,
          REQUEST_TIMEOUT_MS,
        );
        outcomes.set(entry.name, { answer });
        if (entry.expect.answer === 'document' && (answer.status === 202 || answer.status === 200)) {
          const documentId = jsonOf<{ document?: DocumentView }>(answer)?.document?.documentId;
          if (documentId !== undefined) accepted.push({ name: entry.name, documentId });
        }
      });
      const settledBy = DOCUMENTS_SETTLE_MS;
      await Promise.all(
        accepted.map(async ({ name, documentId }) => {
          const document = await waitForDocument(ATTACKER, documentId, settledBy).catch(() => undefined);
          outcomes.set(name, { ...outcomes.get(name)!, ...(document === undefined ? {} : { document }) });
        }),
      );
      // eslint-disable-next-line no-console -- how each hostile document ended, for whoever reads the run
      console.info(
        accepted
          .map(({ name }) => {
            const document = outcomes.get(name)?.document;
            const failure = document?.failure;
            return `  ${name}: ${document?.status ?? 'unknown'}${failure ? ` (${failure.code}) ${failure.reason}` : ''}`;
          })
          .join('\n'),
      );
    } finally {
      loopDelay.disable();
      const samples = await health.stop();
      peakRss = memory.stop();
      healthLatencies = samples.map((sample) => sample.latencyMs);
      healthPolls = samples.length;
      healthFailures = samples
        .filter((sample) => (sample.status >= 500 || sample.status === 0) && !onlySlow(sample))
        .map((sample) => `${sample.status}: ${sample.detail ?? ''}`);
      healthSlow = samples.filter(onlySlow).length;
      // eslint-disable-next-line no-console -- the run's figures (health latency, peak memory) are its report
      console.info(
        `hostile input: ${hostileCorpus.length} entries; /api/health p50 ${percentile(healthLatencies, 0.5).toFixed(0)} ms, ` +
          `p99 ${percentile(healthLatencies, 0.99).toFixed(0)} ms, max ${Math.max(...healthLatencies).toFixed(0)} ms ` +
          `over ${samples.length} polls (${healthSlow} of them 503 for a dependency slower than health's budget); peak RSS ${(peakRss / 1024 ** 2).toFixed(0)} MB ` +
          `(after: ${(residentBytes() / 1024 ** 2).toFixed(0)} MB); event loop delay p99 ` +
          `${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms`,
      );
    }
    expect(outcomes.size).toBe(hostileCorpus.length);
  }, 90_000);

  it.each(hostileCorpus.map((entry) => [entry.name, entry] as const))('%s', (_name, entry) => {
    const outcome = outcomes.get(entry.name);
    const documentId = outcome?.document?.documentId;
    const problems = judge(
      entry,
      outcome,
      documentId === undefined ? [] : (deliveries.get(documentId) ?? []),
    );
    expect(problems.join('\n'), `${entry.name} (${entry.attacks})`).toBe('');
  });

  it('answers nothing with a 5xx, /api/health included', () => {
    const failed = [...outcomes]
      .filter(([, { answer }]) => answer.status >= 500)
      .map(([name, { answer }]) => `${name}: ${describeAnswer(answer)}`);
    expect(failed).toEqual([]);
    expect(healthPolls).toBeGreaterThan(0);
    expect(healthFailures, 'health polls that failed').toEqual([]);
  });

  it(`keeps resident memory under ${RSS_BOUND_BYTES / 1024 ** 3} GB`, () => {
    expect(peakRss).toBeGreaterThan(0);
    expect(peakRss).toBeLessThan(RSS_BOUND_BYTES);
  });

  it('dead-letters no document: each hostile one settled on its first delivery', () => {
    const deadLetters = runtime.serviceBus.deadLetters({ queueName: KNOWLEDGE_INGEST_QUEUE });
    expect(deadLetters.map((message) => message.deadLetterReason)).toEqual([]);
  });

  it("keeps the control user's conversation, fact and document, and every container answers", async () => {
    const { sessionId, documentId, factId } = targets.control;
    const conversation = await as(CONTROL, `/api/history/conversations/${sessionId}`);
    expect(conversation.status).toBe(200);
    const shown = (await conversation.json()) as { title: string; messages: unknown[] };
    expect({ messages: shown.messages.length, title: shown.title }).toEqual(controlBefore);

    const memories = await as(CONTROL, `/api/memory/users/${CONTROL}/memories`);
    expect(memories.status).toBe(200);
    const { facts } = (await memories.json()) as { facts: { factId: string; status: string }[] };
    expect(facts).toContainEqual(expect.objectContaining({ factId, status: 'active' }));

    const document = await as(CONTROL, `/api/knowledge/documents/${documentId}`);
    expect(document.status).toBe(200);
    expect(((await document.json()) as { document: DocumentView }).document.status).toBe('ready');
    const search = await as(CONTROL, '/api/knowledge/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'tide tables lamp keeper' }),
    });
    expect(search.status).toBe(200);
    const { results } = (await search.json()) as { results: { documentId: string }[] };
    expect(results.map((hit) => hit.documentId)).toContain(documentId);

    for (const userId of [CONTROL, ATTACKER]) {
      const lists = [
        `/api/history/users/${userId}/conversations`,
        `/api/history/users/${userId}/stats`,
        `/api/memory/users/${userId}/memories`,
        '/api/knowledge/documents',
        '/api/knowledge/documents?library=shared',
      ];
      for (const path of lists) expect((await as(userId, path)).status, `${userId} GET ${path}`).toBe(200);
      const searched = await as(userId, `/api/memory/users/${userId}/conversations/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'lighthouse' }),
      });
      expect(searched.status, `${userId} memory search`).toBe(200);
    }
    const { database } = runtime.clients;
    for (const container of cosmosContainers) {
      const { resources } = await database
        .container(container.id)
        .items.query('SELECT VALUE COUNT(1) FROM c')
        .fetchAll();
      expect(resources, `container ${container.id}`).toHaveLength(1);
    }
  }, 30_000);
});

/** A loopback server of the tenant's signing keys, and tokens signed with them (or with a key it does not serve). */
async function startTenant(): Promise<{ jwksUrl: string; targets: IdentityTargets; close(): Promise<void> }> {
  const trusted = await generateKeyPair('RS256');
  const foreign = await generateKeyPair('RS256');
  const jwks = JSON.stringify({
    keys: [{ ...(await exportJWK(trusted.publicKey)), kid: 'trusted', alg: 'RS256', use: 'sig' }],
  });
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    jwksUrl: `http://127.0.0.1:${port}/keys`,
    targets: {
      token(claims, { key = 'trusted', lifetimeSeconds = 600 } = {}) {
        const now = Math.floor(Date.now() / 1000);
        const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key }).setIssuedAt(now);
        if (lifetimeSeconds !== null) jwt.setExpirationTime(now + lifetimeSeconds);
        return jwt.sign(key === 'trusted' ? trusted.privateKey : foreign.privateKey);
      },
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// The identities of the two other auth modes, each against a runtime of its own (one app per process): the caller
// the mode accepts first, so its refusals are not those of a runtime that refuses everyone.
describe.each(['app-service', 'entra'] as const)('hostile identities in %s mode', (mode) => {
  const entries = identityCorpus.filter((entry) => entry.mode === mode);
  const answers = new Map<string, RawAnswer>();
  let runtime: LocalRuntime | undefined;
  let tenant: Awaited<ReturnType<typeof startTenant>> | undefined;

  beforeAll(async () => {
    tenant = await startTenant();
    const settings =
      mode === 'entra'
        ? {
            AUTH_MODE: 'entra',
            AUTH_ENTRA_TENANT_ID: ENTRA.tenantId,
            AUTH_ENTRA_AUDIENCE: ENTRA.audience,
            AUTH_ENTRA_ISSUER: ENTRA.issuer,
            AUTH_ENTRA_JWKS_URL: tenant.jwksUrl,
            AUTH_ENTRA_SCOPE: ENTRA.scope,
          }
        : { AUTH_MODE: 'app-service' };
    runtime = await startTestRuntime({ settings });
    for (const entry of entries) {
      const request = await entry.build(tenant.targets);
      answers.set(entry.name, await sendRaw(runtime.url, request, REQUEST_TIMEOUT_MS));
    }
  }, 30_000);

  afterAll(async () => {
    await runtime?.stop();
    await tenant?.close();
  }, 30_000);

  it.each(entries.map((entry) => [entry.name, entry] as const))('%s', (_name, entry) => {
    const answer = answers.get(entry.name);
    expect(answer && describeAnswer(answer), entry.attacks).toMatch(
      new RegExp(`^(${entry.status.join('|')}) `),
    );
  });
});
