// What model calls cost, end to end over the local runtime with a scripted model that reports usage in the real
// wire format: message-end's cost, the usage API with the background work apart, and no double count on redelivery.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { completedMessageId, MESSAGE_COMPLETED_TOPIC } from '../../shared/conversation/message-completed.js';
import type { ConversationWithMessages, HistoryStats } from '../../shared/history/contracts.js';
import type { LlmUsage } from '../../shared/llm/llm-gateway.js';
import type { UsageFigures, UsageReport } from '../../shared/usage/contracts.js';
import { withUsage } from '../../shared/usage/usage-scope.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { itemsOf } from '../support/conversation-items.js';
import { completedExchange } from '../support/message-completed.js';
import {
  SCRIPTED_MODEL,
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
  type ScriptedReply,
} from '../support/scripted-model.js';

/** US dollars per million tokens: round numbers, so a figure's cost is easy to check by hand. */
const CHAT_PRICE = { input: 2, cachedInput: 1, output: 8, reasoning: 8 };
const EMBEDDING_PRICE = { input: 0.5 };
const PRICES = JSON.stringify({
  [SCRIPTED_MODEL]: CHAT_PRICE,
  [`${SCRIPTED_MODEL}-embedding`]: EMBEDDING_PRICE,
});

const QUESTION = 'I love sailing. Where should I sail in Portugal?';
const ANSWER =
  'Try the Algarve coast in late spring: steady winds, warm water and many marinas. From Lagos you can reach ' +
  'Sagres in a day, and the lagoon of Ria Formosa near Faro is calm enough for a first week aboard.';

/** What the history and memory workers' structured-output requests get: valid, and small. */
function structured(request: ChatCompletionRequest): object {
  const name = request.response_format?.json_schema?.name;
  const input = JSON.parse(request.messages.at(-1)?.content ?? '{}') as { firstQuestion?: string };
  if (name === 'exchange_index')
    return {
      line: 'Q: sailing in Portugal',
      tags: ['sailing'],
      ...(input.firstQuestion !== undefined ? { title: 'Sailing in Portugal' } : {}),
    };
  if (name === 'session_summary') return { summary: 'Sailing.' };
  if (name === 'conversation_summary')
    return {
      summary: 'The user loves sailing.',
      themes: ['sailing'],
      persons: [],
      places: [],
      user_sentiment: 'positive',
    };
  if (name === 'memory_profile_changes')
    return {
      add: [{ category: 'interests', statement: 'The user loves sailing.', evidence: 'I love sailing' }],
      reaffirm: [],
      replace: [],
      retract: [],
    };
  throw new Error(`unexpected structured request ${String(name)}`);
}

function chatCost(figures: Pick<UsageFigures, 'inputTokens' | 'cachedInputTokens' | 'outputTokens'>): number {
  const fresh = figures.inputTokens - figures.cachedInputTokens;
  return (
    (fresh * CHAT_PRICE.input +
      figures.cachedInputTokens * CHAT_PRICE.cachedInput +
      figures.outputTokens * CHAT_PRICE.output) /
    1e6
  );
}

describe('what model calls cost', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let live: RealtimeListener;
  let sessionId = '';
  let chatMessageId = '';
  let end: { usage: LlmUsage; cost: { usd: number; model: string; priced: boolean } };

  beforeAll(async () => {
    model = await startScriptedModel((request): ScriptedReply => {
      if (request.stream !== true) return { content: JSON.stringify(structured(request)) };
      return { content: ANSWER };
    });
    runtime = await startTestRuntime({ settings: { ...model.settings, LLM_PRICES: PRICES } });
    alice = new ChatClient(runtime.url, 'user_001');
    live = await alice.listen();
    sessionId = await alice.startSession();
    chatMessageId = randomUUID();
    await expectStatus(await alice.post({ sessionId, chatMessageId, text: QUESTION }), 202);
    const events = await live.waitForTerminal(chatMessageId);
    end = events.at(-1) as unknown as typeof end;
    await settle(runtime);
  }, 120_000);
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
    await model?.close();
  });

  const usage = async (query = '', user = 'user_001') =>
    fetch(`${runtime.url}/api/usage/users/${user}${query}`, { headers: alice.headers() });

  it("ends the turn with its cost: the tokens the model reported at the table's prices", () => {
    expect(end).toMatchObject({ type: 'message-end', cost: { model: SCRIPTED_MODEL, priced: true } });
    expect(end.usage.promptTokens).toBeGreaterThan(0);
    expect(end.cost.usd).toBeCloseTo(
      chatCost({
        inputTokens: end.usage.promptTokens,
        cachedInputTokens: end.usage.cachedPromptTokens ?? 0,
        outputTokens: end.usage.completionTokens,
      }),
      12,
    );
  });

  it('reports the turn and, apart, its background work: title, summary, profile and embedding', async () => {
    const report = await expectStatus<UsageReport>(await usage('?groupBy=conversation'), 200);
    expect(report.turns.costUsd).toBeCloseTo(end.cost.usd, 12);
    expect(report.turns.calls).toBe(1);
    // Each structured request the workers made is one background call of its kind.
    const asked = (name: string, titled = false) =>
      model.requests.filter(
        (request) =>
          request.response_format?.json_schema?.name === name &&
          (request.messages.at(-1)?.content ?? '').includes('"firstQuestion"') === titled,
      ).length;
    // The exchange's index line also titles the conversation once it has enough text.
    expect(asked('exchange_index', true)).toBe(1);
    expect(report.backgroundByKind.title?.calls).toBe(1);
    expect(report.backgroundByKind['exchange-index']?.calls ?? 0).toBe(asked('exchange_index'));
    expect(report.backgroundByKind.summary?.calls).toBe(
      asked('conversation_summary') + asked('session_summary'),
    );
    expect(report.backgroundByKind.profile?.calls).toBe(asked('memory_profile_changes'));
    expect(report.backgroundByKind.embedding?.calls).toBeGreaterThanOrEqual(1);
    for (const kind of ['title', 'summary', 'profile'] as const)
      expect(report.backgroundByKind[kind]?.costUsd).toBeCloseTo(
        chatCost(report.backgroundByKind[kind]!),
        12,
      );
    const embedding = report.backgroundByKind.embedding!;
    expect(embedding.costUsd).toBeCloseTo((embedding.inputTokens * EMBEDDING_PRICE.input) / 1e6, 12);
    expect(report.groups).toEqual([
      { key: sessionId, turns: report.turns, background: report.background, total: report.total },
    ]);
    // One record for the turn: its round's calls (handed to the history worker by its announcement) and each
    // worker's run for it, each call of theirs in it by kind and model.
    const records = await runtime.app.usage.ledger.records('user_001', report.from, report.to);
    const ofTurn = records.filter((record) => record.turnId === chatMessageId);
    expect(ofTurn).toHaveLength(1);
    expect(Object.keys(ofTurn[0]!.jobs).sort()).toEqual(['history', 'memory', 'round:0']);
    expect(report.total.costUsd).toBeCloseTo(report.turns.costUsd + report.background.costUsd, 12);

    // The same spend by day and by model, and in the conversation's summary and the user's stats.
    const byDay = await expectStatus<UsageReport>(await usage('?groupBy=day'), 200);
    expect(byDay.total).toEqual(report.total);
    const byModel = await expectStatus<UsageReport>(await usage('?groupBy=model'), 200);
    expect(byModel.groups.map((group) => group.key)).toEqual([SCRIPTED_MODEL, `${SCRIPTED_MODEL}-embedding`]);
    const conversation = await expectStatus<ConversationWithMessages>(
      await fetch(`${runtime.url}/api/history/conversations/${sessionId}`, { headers: alice.headers() }),
      200,
    );
    expect(conversation.cost?.usd).toBeCloseTo(report.total.costUsd, 9);
    const stats = await expectStatus<HistoryStats>(
      await fetch(`${runtime.url}/api/history/users/user_001/stats`, { headers: alice.headers() }),
      200,
    );
    expect(stats.cost?.usd).toBeCloseTo(report.total.costUsd, 9);
    expect(await runtime.app.usage.reader.costInMonth('user_001', new Date())).toBeCloseTo(
      report.total.costUsd,
      9,
    );
    expect(await runtime.app.usage.reader.tokensOnDay('user_001', new Date())).toBe(
      report.total.inputTokens + report.total.outputTokens,
    );
  });

  it("counts a document's ingestion to its uploader, as background work", async () => {
    const upload = await fetch(`${runtime.url}/api/knowledge/documents`, {
      method: 'POST',
      headers: { ...alice.headers(), 'content-type': 'application/json' },
      body: JSON.stringify({
        fileName: 'moorings.md',
        contentType: 'text/markdown',
        contentBase64: Buffer.from(
          '# Moorings\n\n## Lagos\n\nThe marina of Lagos has visitor berths all year.\n',
        ).toString('base64'),
      }),
    });
    expect(upload.status).toBe(202);
    await settle(runtime);
    const report = await expectStatus<UsageReport>(await usage('?groupBy=model'), 200);
    const ingestion = report.backgroundByKind.ingestion!;
    expect(ingestion.calls).toBeGreaterThanOrEqual(1);
    expect(ingestion.costUsd).toBeCloseTo((ingestion.inputTokens * EMBEDDING_PRICE.input) / 1e6, 12);
    // Not a conversation's: the by-conversation report puts it under no session.
    const byConversation = await expectStatus<UsageReport>(await usage('?groupBy=conversation'), 200);
    expect(byConversation.groups.find((group) => group.key === '')?.background.calls).toBe(ingestion.calls);
  });

  it('counts nothing twice: a redelivered message-completed, or a job that runs its calls again', async () => {
    const before = await expectStatus<UsageReport>(await usage('?groupBy=conversation'), 200);
    await runtime.serviceBus.publish(MESSAGE_COMPLETED_TOPIC, {
      messageId: `${completedMessageId(sessionId, chatMessageId)}.again`,
      sessionId,
      body: {
        ...completedExchange({
          userId: 'user_001',
          sessionId,
          chatMessageId,
          ordinal: 0,
          question: QUESTION,
          at: new Date().toISOString(),
          answer: { content: ANSWER },
        }),
        // As the turn announced it: with its round's calls handed on.
        usage: {
          job: 'round:0',
          calls: [
            {
              kind: 'turn',
              model: SCRIPTED_MODEL,
              usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
            },
          ],
        },
      },
    });
    await settle(runtime);
    // The memory worker's run for the turn, and the turn's round (a step run again records its calls itself), made
    // again: the turn's record holds both jobs already.
    for (const job of ['memory', 'round:0'])
      await withUsage({ userId: 'user_001', sessionId, turnId: chatMessageId, job }, () =>
        runtime.app.memory.worker.llm.embed(['The user loves sailing.']),
      );
    const after = await expectStatus<UsageReport>(await usage('?groupBy=conversation'), 200);
    expect(after).toEqual(before);
  });

  it("keeps a deleted conversation's spend in the totals, no longer tied to it", async () => {
    const before = await expectStatus<UsageReport>(await usage('?groupBy=day'), 200);
    const deleted = await fetch(`${runtime.url}/api/history/conversations/${sessionId}`, {
      method: 'DELETE',
      headers: alice.headers(),
    });
    expect(deleted.status).toBe(204);
    await settle(runtime);
    expect((await itemsOf(runtime, sessionId)).filter((item) => item.startsWith('usage/'))).toEqual([]);
    expect(await expectStatus<UsageReport>(await usage('?groupBy=day'), 200)).toEqual(before);
    const byConversation = await expectStatus<UsageReport>(await usage('?groupBy=conversation'), 200);
    expect(byConversation.groups.map((group) => group.key)).toEqual(['']);
  });

  it("refuses another user's usage and bad parameters with problem details", async () => {
    expect([403, 404]).toContain((await usage('', 'user_002')).status);
    for (const query of [
      '?groupBy=week',
      '?from=2026-02-30',
      '?from=yesterday',
      '?from=2026-05-02&to=2026-05-01',
      '?from=2024-01-01&to=2026-01-01',
      '?limit=3',
    ]) {
      const reply = await usage(query);
      expect(reply.status, query).toBe(400);
      expect(reply.headers.get('content-type'), query).toMatch(/application\/problem\+json/);
    }
  });
});
