// The memory worker's use-case over in-memory ports and a recording model: once per turn however often delivered;
// facts reaffirmed, superseded, merged across conversations in either order; only the user's own words reach the
// profile; use_memory false, failed and deleted turns leave no trace; a failing model only delays the turn's memory.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryConversationSummaries, MemoryProfileFacts } from '../../test/support/in-memory-memory.js';
import { MemorySessions } from '../../test/support/in-memory-ports.js';
import { completedExchange } from '../../test/support/message-completed.js';
import { startScriptedModel, type ScriptedModel } from '../../test/support/scripted-model.js';
import { MAIN_BRANCH, type OrdinalGap, type TurnBranch } from '../conversation/branches.js';
import type { MessageCompleted } from '../conversation/message-completed.js';
import { ValidationError } from '../errors.js';
import { createLlmGateway } from '../llm/adapters/openai-gateway.js';
import { LlmError, type CompleteJsonRequest, type LlmGateway, type LlmReply } from '../llm/llm-gateway.js';
import {
  consolidationId,
  memoryChangedSchema,
  type MemoryChanged,
  type ProfileFact,
  type SummaryContent,
} from './contracts.js';
import type { MemoryNotices } from './memory-notices.js';
import { rememberTurn } from './remember-turn.js';
import { forgetFact } from './forget-memories.js';
import { FACT_WRITE_ATTEMPTS } from './profile-facts.js';
import {
  consolidateTurn,
  MODEL_DELIVERIES,
  newFactId,
  type MemoryWorkerServices,
} from './consolidate-turn.js';
import {
  CONVERSATION_SUMMARY_FORMAT,
  PROFILE_CHANGES_FORMAT,
  type ProposedProfileChanges,
} from './memory-llm.js';

const userId = 'user_001';
const at = '2026-11-22T10:00:00.000Z';
const later = '2026-11-22T10:05:00.000Z';

interface ProfileInput {
  userMessage: string;
  activeFacts: { factId: string; category: string; statement: string }[];
}
interface SummaryInput {
  previousSummary: SummaryContent | null;
  exchange: { userMessage: string; assistantAnswer: string };
}

const noChanges: ProposedProfileChanges = { add: [], reaffirm: [], replace: [], retract: [] };

/** Proposes "The user likes X." for each "I like X" sentence, quoting it, as a well-behaved model would. */
function likesProposal(input: ProfileInput): ProposedProfileChanges {
  const add = [...input.userMessage.matchAll(/I like ([\w ]+)/g)].map((match) => ({
    category: 'interests' as const,
    statement: `The user likes ${match[1]}.`,
    evidence: match[0],
  }));
  return { ...noChanges, add };
}

/** The previous summary with the new question appended, so a test can see what each call was given. */
function appendingSummary(input: SummaryInput): SummaryContent {
  const previous = input.previousSummary?.summary;
  return {
    summary: previous
      ? `${previous} Then: ${input.exchange.userMessage}`
      : `Asked: ${input.exchange.userMessage}`,
    themes: ['chat'],
    persons: [],
    places: [],
    user_sentiment: 'neutral',
  };
}

/** A model that answers completeJson from the test's functions and validates as the real gateway does. */
class RecordingModel implements LlmGateway {
  readonly requests: CompleteJsonRequest<unknown>[] = [];
  embedded: string[] = [];
  profile: (input: ProfileInput) => unknown = likesProposal;
  summary: (input: SummaryInput) => unknown = appendingSummary;
  /** Thrown by the next calls of that format, one error per call. */
  readonly failures = new Map<string, Error[]>();

  completeJson<T>(request: CompleteJsonRequest<T>): Promise<T> {
    this.requests.push(request);
    const failure = this.failures.get(request.name)?.shift();
    if (failure) return Promise.reject(failure);
    const input = JSON.parse(request.messages.at(-1)?.content ?? '{}') as ProfileInput & SummaryInput;
    const answer = request.name === PROFILE_CHANGES_FORMAT ? this.profile(input) : this.summary(input);
    const parsed = request.schema.safeParse(answer);
    return parsed.success
      ? Promise.resolve(parsed.data)
      : Promise.reject(new LlmError(`unusable "${request.name}" JSON`, { retryable: true }));
  }
  inputs(name: string): unknown[] {
    return this.requests
      .filter((request) => request.name === name)
      .map((request) => JSON.parse(request.messages.at(-1)?.content ?? '{}') as unknown);
  }
  calls(name: string): number {
    return this.requests.filter((request) => request.name === name).length;
  }
  embed(texts: string[]): Promise<number[][]> {
    this.embedded.push(...texts);
    return Promise.resolve(texts.map((text) => [text.length, 1, 0]));
  }
  streamChat(): Promise<LlmReply> {
    return Promise.reject(new Error('not used'));
  }
  probe() {
    return Promise.resolve({ ok: true, detail: 'recording model' });
  }
}

class RecordingLog {
  readonly lines: string[] = [];
  readonly warnings: string[] = [];
  log = (...args: unknown[]) => void this.lines.push(args.join(' '));
  warn = (...args: unknown[]) => void this.warnings.push(args.join(' '));
}

let summaries: MemoryConversationSummaries;
let facts: MemoryProfileFacts;
let sessions: MemorySessions;
let model: RecordingModel;
let log: RecordingLog;
let services: MemoryWorkerServices;
let sessionId: string;

beforeEach(async () => {
  summaries = new MemoryConversationSummaries();
  facts = new MemoryProfileFacts();
  sessions = new MemorySessions();
  model = new RecordingModel();
  log = new RecordingLog();
  services = { summaries, facts, sessions, llm: model, now: () => new Date(later) };
  sessionId = (await sessions.create(userId)).sessionId;
});

const chatId = (n: number) => `7c9e6679-7425-40de-944b-${String(n).padStart(12, '0')}`;

/** Turn n of the session: the user's message at ordinal 2n, the answer (with a tool call) at 2n + 1. */
function turn(
  n: number,
  question: string,
  options: {
    answer?: string;
    toolResult?: string;
    session?: string;
    outcome?: 'failed';
    branch?: TurnBranch;
  } & Partial<Pick<MessageCompleted, 'useMemory' | 'systemPrompt'>> = {},
): MessageCompleted {
  return completedExchange({
    userId,
    sessionId: options.session ?? sessionId,
    chatMessageId: chatId(n),
    ordinal: 2 * n,
    question,
    at,
    failed: options.outcome === 'failed',
    answer: {
      content: options.answer ?? `answer ${n}`,
      finishReason: 'stop',
      toolCalls: [
        {
          id: 'c1',
          name: 'web_search',
          arguments: '{"q":"x"}',
          result: options.toolResult ?? 'nothing found',
          isError: false,
          round: 0,
        },
      ],
    },
    ...(options.branch === undefined ? {} : { branch: options.branch }),
    ...(options.useMemory === undefined ? {} : { useMemory: options.useMemory }),
    ...(options.systemPrompt ? { systemPrompt: options.systemPrompt } : {}),
  });
}

const source = (n: number) => ({
  sessionId,
  chatMessageId: chatId(n),
  messageId: `${chatId(n)}_user`,
  at,
  ordinal: 2 * n,
});
const allFacts = () => facts.list(userId);
const summaryOf = async () => (await summaries.get(userId, sessionId))?.summary;
const snapshot = () =>
  structuredClone({
    summaries: [...summaries.documents],
    facts: [...facts.facts],
    records: [...facts.records],
  });
const memoryIsEmpty = () => summaries.documents.size + facts.facts.size + facts.records.size === 0;

/** A promise and its resolve, for holding one side of a race until the other has got somewhere. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * Makes two turns race on one fact as two workers of two conversations do: neither writes it before both have read
 * it (both hold the same version), then the write `landsFirst` picks lands while the other waits, and that one
 * writes on the version it read, no longer the stored one. `held` is what its write answered.
 */
function race(factId: string, landsFirst: (fact: ProfileFact) => boolean): { held?: 'written' | 'conflict' } {
  const get = facts.get.bind(facts);
  const put = facts.put.bind(facts);
  const outcome: { held?: 'written' | 'conflict' } = {};
  const bothRead = gate();
  const firstLanded = gate();
  let reads = 0;
  facts.get = async (user, id) => {
    const read = await get(user, id);
    if (id === factId && reads < 2) {
      if (++reads === 2) bothRead.open();
      await bothRead.opened;
    }
    return read;
  };
  facts.put = async (fact, version) => {
    if (fact.id !== factId || outcome.held !== undefined) return put(fact, version);
    if (landsFirst(fact)) {
      const written = await put(fact, version);
      firstLanded.open();
      return written;
    }
    await firstLanded.opened;
    outcome.held = await put(fact, version);
    return outcome.held;
  };
  return outcome;
}

const saidIn = (session: string) => (fact: ProfileFact) =>
  fact.provenance.some((known) => known.sessionId === session);

describe('consolidateTurn', () => {
  it("writes the conversation's summary with its embedding and the facts the user stated, with provenance", async () => {
    const outcome = await consolidateTurn(services, turn(0, 'I like tea. What goes with it?'), log);

    expect(outcome).toEqual({ status: 'consolidated', summary: 'written', profile: 'applied' });
    expect(await summaryOf()).toEqual({
      id: sessionId,
      kind: 'conversation-summary',
      userId,
      sessionId,
      summary: 'Asked: I like tea. What goes with it?',
      themes: ['chat'],
      persons: [],
      places: [],
      user_sentiment: 'neutral',
      timestamp: at,
      vector_embedding: [37, 1, 0],
      coveredThrough: 1,
      exchanges: 1,
      createdAt: later,
      chatMessageId: chatId(0),
    });
    expect(model.embedded).toEqual(['Asked: I like tea. What goes with it?']);
    const id = newFactId(sessionId, chatId(0), 0);
    expect(await allFacts()).toEqual([
      {
        id,
        kind: 'fact',
        userId,
        category: 'interests',
        statement: 'The user likes tea.',
        status: 'active',
        validFrom: at,
        provenance: [source(0)],
        createdAt: later,
        updatedAt: later,
      },
    ]);
    expect(await facts.getConsolidation(userId, sessionId, chatId(0))).toMatchObject({
      id: consolidationId(sessionId, chatId(0)),
      changes: [{ op: 'add', factId: id, category: 'interests', statement: 'The user likes tea.' }],
      appliedAt: later,
    });
  });

  it('changes nothing when the event is delivered again, and asks the model nothing more', async () => {
    await consolidateTurn(services, turn(0, 'I like tea.'), log);
    await consolidateTurn(services, turn(1, 'I like chess.'), log);
    const once = snapshot();
    for (let i = 0; i < 3; i++) {
      expect(await consolidateTurn(services, turn(1, 'I like chess.'), log)).toEqual({
        status: 'consolidated',
        summary: 'already-covered',
        profile: 'already-applied',
      });
      await consolidateTurn(services, turn(0, 'I like tea.'), log);
    }
    expect(snapshot()).toEqual(once);
    expect(model.requests).toHaveLength(4);
  });

  it('redone after failing half-way through applying, applies the recorded changes without a model call', async () => {
    model.profile = () => ({
      ...noChanges,
      add: [
        { category: 'interests', statement: 'The user likes tea.', evidence: 'I like tea' },
        { category: 'goals', statement: 'The user wants to learn Greek.', evidence: 'learn Greek' },
      ],
    });
    const put = facts.put.bind(facts);
    let failures = 1;
    facts.put = (fact: ProfileFact, version: string | undefined) =>
      fact.category === 'goals' && failures-- > 0
        ? Promise.reject(new Error('Cosmos DB unavailable'))
        : put(fact, version);

    const event = turn(0, 'I like tea and I want to learn Greek.');
    await expect(consolidateTurn(services, event, log)).rejects.toThrow('Cosmos DB unavailable');
    expect((await facts.getConsolidation(userId, sessionId, chatId(0)))?.appliedAt).toBeUndefined();
    // Whatever the model would say now, the recorded decision is what gets applied.
    model.profile = () => ({
      ...noChanges,
      add: [{ category: 'dislikes', statement: 'The user hates tea.', evidence: 'tea' }],
    });
    expect(await consolidateTurn(services, event, log)).toMatchObject({ profile: 'applied' });

    expect((await allFacts()).map((f) => f.statement)).toEqual([
      'The user likes tea.',
      'The user wants to learn Greek.',
    ]);
    expect(model.calls(PROFILE_CHANGES_FORMAT)).toBe(1);
  });

  it('does not duplicate a repeated fact: the later message joins its provenance', async () => {
    await consolidateTurn(services, turn(0, 'I like tea.'), log);
    const other = (await sessions.create(userId)).sessionId;
    await consolidateTurn(services, turn(1, 'As I said, I like tea.', { session: other }), log);

    const [tea, ...rest] = await allFacts();
    expect(rest).toEqual([]);
    expect(tea).toMatchObject({
      statement: 'The user likes tea.',
      status: 'active',
      validFrom: at,
      provenance: [source(0), { ...source(1), sessionId: other }],
    });
    // The model was shown the active fact, and its add became a reaffirmation.
    const input = model.inputs(PROFILE_CHANGES_FORMAT).at(-1) as ProfileInput;
    expect(input.activeFacts).toEqual([
      { factId: tea?.id, category: 'interests', statement: 'The user likes tea.' },
    ]);
    expect((await facts.getConsolidation(userId, other, chatId(1)))?.changes).toEqual([
      { op: 'reaffirm', factId: tea?.id },
    ]);
  });

  it('keeps both sources when two conversations reaffirm a fact at the same moment', async () => {
    await consolidateTurn(services, turn(0, 'I like tea.'), log);
    const [tea] = await allFacts();
    const [first, second] = [
      (await sessions.create(userId)).sessionId,
      (await sessions.create(userId)).sessionId,
    ];
    const racing = race(tea!.id, saidIn(first));

    await Promise.all([
      consolidateTurn(services, turn(1, 'As I said, I like tea.', { session: first }), log),
      consolidateTurn(services, turn(2, 'I like tea. Really.', { session: second }), log),
    ]);

    // The second write was made on the version both read: refused, then made again on the first one's result.
    expect(racing.held).toBe('conflict');
    expect(await allFacts()).toEqual([
      expect.objectContaining({
        id: tea!.id,
        status: 'active',
        provenance: [source(0), { ...source(1), sessionId: first }, { ...source(2), sessionId: second }],
      }),
    ]);
  });

  describe('when one conversation supersedes a fact while another reaffirms it', () => {
    let contoso: ProfileFact;
    let moving: string;
    let staying: string;
    const fabrikam = () => newFactId(moving, chatId(1), 0);
    beforeEach(async () => {
      model.profile = () => ({
        ...noChanges,
        add: [
          {
            category: 'work_profile',
            statement: 'The user works at Contoso.',
            evidence: 'I work at Contoso',
          },
        ],
      });
      await consolidateTurn(services, turn(0, 'I work at Contoso.'), log);
      [contoso] = (await allFacts()) as [ProfileFact];
      moving = (await sessions.create(userId)).sessionId;
      staying = (await sessions.create(userId)).sessionId;
      const replace: ProposedProfileChanges = {
        ...noChanges,
        replace: [
          {
            factId: contoso.id,
            category: 'work_profile',
            statement: 'The user works at Fabrikam.',
            evidence: 'now work at Fabrikam',
            reason: 'The user changed employer.',
          },
        ],
      };
      const reaffirm = model.profile;
      model.profile = (input) => (input.userMessage.includes('Fabrikam') ? replace : reaffirm(input));
    });
    const both = () =>
      Promise.all([
        consolidateTurn(
          services,
          turn(1, 'I left Contoso and now work at Fabrikam.', { session: moving }),
          log,
        ),
        consolidateTurn(services, turn(2, 'I work at Contoso, remember?', { session: staying }), log),
      ]);

    it('ends superseded, never active again, when the supersede lands first', async () => {
      const racing = race(contoso.id, (fact) => fact.status === 'superseded');
      await both();

      // The reaffirmation, written on the version it read, is refused; read again, the fact is no longer active.
      expect(racing.held).toBe('conflict');
      expect(await facts.getConsolidation(userId, staying, chatId(2))).toMatchObject({
        changes: [{ op: 'reaffirm', factId: contoso.id }],
      });
      expect(await allFacts()).toEqual([
        {
          ...contoso,
          status: 'superseded',
          validUntil: at,
          supersededBy: fabrikam(),
          changeReason: 'The user changed employer.',
          updatedAt: later,
        },
        expect.objectContaining({ id: fabrikam(), status: 'active' }),
      ]);
    });

    it('ends superseded with the reaffirming source kept when the reaffirmation lands first', async () => {
      const racing = race(contoso.id, saidIn(staying));
      await both();

      expect(racing.held).toBe('conflict');
      expect(await allFacts()).toEqual([
        {
          ...contoso,
          status: 'superseded',
          validUntil: at,
          supersededBy: fabrikam(),
          changeReason: 'The user changed employer.',
          provenance: [source(0), { ...source(2), sessionId: staying }],
          updatedAt: later,
        },
        expect.objectContaining({ id: fabrikam(), status: 'active' }),
      ]);
    });
  });

  it('throws after a fact keeps changing under its writes, and applies the record on the redelivery', async () => {
    const put = facts.put.bind(facts);
    facts.put = () => Promise.resolve('conflict');
    const event = turn(0, 'I like tea.');
    await expect(consolidateTurn(services, event, log)).rejects.toThrow(
      `changed under ${FACT_WRITE_ATTEMPTS} writes in a row`,
    );
    expect((await facts.getConsolidation(userId, sessionId, chatId(0)))?.appliedAt).toBeUndefined();

    facts.put = put;
    expect(await consolidateTurn(services, event, log, { deliveryCount: 2 })).toMatchObject({
      profile: 'applied',
    });
    expect((await allFacts()).map((f) => f.statement)).toEqual(['The user likes tea.']);
  });

  it('supersedes a contradicted fact, keeping when and why, and makes the new one active', async () => {
    model.profile = () => ({
      ...noChanges,
      add: [
        { category: 'work_profile', statement: 'The user works at Contoso.', evidence: 'I work at Contoso' },
      ],
    });
    await consolidateTurn(services, turn(0, 'I work at Contoso.'), log);
    const [contoso] = await allFacts();
    model.profile = () => ({
      ...noChanges,
      replace: [
        {
          factId: contoso!.id,
          category: 'work_profile',
          statement: 'The user works at Fabrikam.',
          evidence: 'I left Contoso and now work at Fabrikam',
          reason: 'The user changed employer.',
        },
      ],
    });
    const moved = { ...turn(1, 'I left Contoso and now work at Fabrikam.'), completedAt: later };
    moved.messages = moved.messages.map((m) => ({ ...m, timestamp: later }));
    await consolidateTurn(services, moved, log);

    const fabrikamId = newFactId(sessionId, chatId(1), 0);
    expect(await allFacts()).toEqual([
      expect.objectContaining({
        id: contoso!.id,
        status: 'superseded',
        validFrom: at,
        validUntil: later,
        supersededBy: fabrikamId,
        changeReason: 'The user changed employer.',
      }),
      expect.objectContaining({
        id: fabrikamId,
        statement: 'The user works at Fabrikam.',
        status: 'active',
        validFrom: later,
        provenance: [{ ...source(1), at: later }],
      }),
    ]);
    expect((await facts.list(userId, { statuses: ['active'] })).map((f) => f.statement)).toEqual([
      'The user works at Fabrikam.',
    ]);
  });

  it('leaves no trace of a turn sent with use_memory false, and asks the model nothing', async () => {
    expect(await consolidateTurn(services, turn(0, 'I like tea.', { useMemory: false }), log)).toEqual({
      status: 'skipped',
      reason: 'memory-off',
    });
    expect(memoryIsEmpty()).toBe(true);
    expect(model.requests).toHaveLength(0);
    expect(log.lines.join('\n')).toMatch(/use_memory false/);
  });

  it('skips a failed turn', async () => {
    expect(await consolidateTurn(services, turn(0, 'I like tea.', { outcome: 'failed' }), log)).toEqual({
      status: 'skipped',
      reason: 'failed-turn',
    });
    expect(memoryIsEmpty()).toBe(true);
    expect(model.requests).toHaveLength(0);
  });

  it('keeps nothing for a deleted conversation, or one being deleted', async () => {
    await sessions.markDeleting(userId, sessionId);
    expect(await consolidateTurn(services, turn(0, 'I like tea.'), log)).toEqual({
      status: 'skipped',
      reason: 'conversation-deleted',
    });
    expect(memoryIsEmpty()).toBe(true);
    await sessions.markDeleted(userId, sessionId);
    await consolidateTurn(services, turn(0, 'I like tea.'), log);
    expect(memoryIsEmpty()).toBe(true);
  });

  it("reads the conversation's tombstone once, after its writes", async () => {
    const reads: boolean[] = [];
    const counted: MemoryWorkerServices = {
      ...services,
      sessions: {
        find: async (user: string, session: string) => {
          // Whether the turn's summary was written by the time it was read.
          reads.push((await summaries.get(userId, sessionId)) !== undefined);
          return sessions.find(user, session);
        },
      },
    };
    expect(await consolidateTurn(counted, turn(0, 'I like tea.'), log)).toMatchObject({
      status: 'consolidated',
    });
    expect(reads).toEqual([true]);
  });

  it('removes what it wrote when the conversation is deleted while it runs, sparing other conversations', async () => {
    const other = (await sessions.create(userId)).sessionId;
    await consolidateTurn(services, turn(0, 'I like tea. I like chess.', { session: other }), log);
    model.summary = (input) => {
      void sessions.markDeleting(userId, sessionId);
      return appendingSummary(input);
    };
    expect(await consolidateTurn(services, turn(1, 'I like tea. I like jazz.'), log)).toEqual({
      status: 'skipped',
      reason: 'conversation-deleted',
    });

    expect(await summaries.get(userId, sessionId)).toBeUndefined();
    expect(await facts.getConsolidation(userId, sessionId, chatId(1))).toBeUndefined();
    // Tea, said in the other conversation too, keeps only its source there; jazz is gone.
    expect((await allFacts()).map((f) => [f.statement, f.provenance.map((p) => p.sessionId)])).toEqual([
      ['The user likes tea.', [other]],
      ['The user likes chess.', [other]],
    ]);
  });

  it('keeps one summary per conversation, rewritten as it grows; an older turn replayed late is covered', async () => {
    for (let n = 0; n < 3; n++) await consolidateTurn(services, turn(n, `question ${n}`), log);

    expect(summaries.documents.size).toBe(1);
    expect(await summaryOf()).toMatchObject({
      summary: 'Asked: question 0 Then: question 1 Then: question 2',
      coveredThrough: 5,
      exchanges: 3,
      createdAt: later,
    });
    expect(model.embedded).toHaveLength(3);
    expect(await consolidateTurn(services, turn(1, 'question 1'), log)).toMatchObject({
      summary: 'already-covered',
    });
    expect(model.calls(CONVERSATION_SUMMARY_FORMAT)).toBe(3);
  });

  it('starts over from a fresh read when the summary changed under its write', async () => {
    await consolidateTurn(services, turn(0, 'question 0'), log);
    const put = summaries.put.bind(summaries);
    let conflicts = 1;
    summaries.put = (document, version) =>
      conflicts-- > 0 ? Promise.resolve('conflict') : put(document, version);
    await consolidateTurn(services, turn(1, 'question 1'), log);
    expect(await summaryOf()).toMatchObject({ exchanges: 2, coveredThrough: 3 });
    expect(model.calls(CONVERSATION_SUMMARY_FORMAT)).toBe(3);

    summaries.put = () => Promise.resolve('conflict');
    await expect(consolidateTurn(services, turn(2, 'question 2'), log)).rejects.toThrow(
      /changed under 3 writes in a row/,
    );
  });

  it('does the profile when the summary model fails, then throws so the event is delivered again', async () => {
    model.failures.set(CONVERSATION_SUMMARY_FORMAT, [new LlmError('rate limited', { retryable: true })]);
    const event = turn(0, 'I like tea.');
    await expect(consolidateTurn(services, event, log, { deliveryCount: 1 })).rejects.toThrow('rate limited');
    expect((await allFacts()).map((f) => f.statement)).toEqual(['The user likes tea.']);
    expect(await summaryOf()).toBeUndefined();

    expect(await consolidateTurn(services, event, log, { deliveryCount: 2 })).toEqual({
      status: 'consolidated',
      summary: 'written',
      profile: 'already-applied',
    });
    expect(model.calls(PROFILE_CHANGES_FORMAT)).toBe(1);
  });

  it('does the summary when the profile model fails, and the profile on the next delivery', async () => {
    model.failures.set(PROFILE_CHANGES_FORMAT, [new LlmError('unusable JSON', { retryable: true })]);
    const event = turn(0, 'I like tea.');
    await expect(consolidateTurn(services, event, log)).rejects.toThrow('unusable JSON');
    expect(await summaryOf()).toMatchObject({ exchanges: 1 });
    expect(facts.records.size).toBe(0);

    expect(await consolidateTurn(services, event, log, { deliveryCount: 2 })).toMatchObject({
      summary: 'already-covered',
      profile: 'applied',
    });
    expect(model.calls(CONVERSATION_SUMMARY_FORMAT)).toBe(1);
  });

  it(`leaves the turn out of a part, with a warning, when the model fails on delivery ${MODEL_DELIVERIES} or refuses`, async () => {
    const rateLimited = () => new LlmError('rate limited', { retryable: true });
    model.failures.set(CONVERSATION_SUMMARY_FORMAT, [rateLimited()]);
    model.failures.set(PROFILE_CHANGES_FORMAT, [new LlmError('content filter', { retryable: false })]);
    expect(
      await consolidateTurn(services, turn(0, 'I like tea.'), log, { deliveryCount: MODEL_DELIVERIES }),
    ).toEqual({ status: 'consolidated', summary: 'left-out', profile: 'left-out' });
    // No fact and no summary: only the turn's place in memory, a record that changed nothing.
    expect(summaries.documents.size + facts.facts.size).toBe(0);
    expect([...facts.records.values()]).toEqual([
      expect.objectContaining({ chatMessageId: chatId(0), changes: [], appliedAt: later }),
    ]);
    expect([...facts.records.values()][0]).not.toHaveProperty('summaryAfter');
    expect(log.warnings.sort()).toEqual([
      expect.stringMatching(/is left out of the profile: the model failed for good\. content filter/),
      expect.stringMatching(/is left out of the summary: the model failed after 3 deliveries\. rate limited/),
    ]);

    // The next turn's summary goes on from what is there.
    await consolidateTurn(services, turn(1, 'question 1'), log);
    expect(await summaryOf()).toMatchObject({ exchanges: 1, coveredThrough: 3 });
  });

  it('lets a store failure escape whatever the delivery, so the event is redelivered and then dead-lettered', async () => {
    summaries.get = () => Promise.reject(new Error('Cosmos DB unavailable'));
    await expect(consolidateTurn(services, turn(0, 'q'), log, { deliveryCount: 9 })).rejects.toThrow(
      'Cosmos DB unavailable',
    );
  });

  it('refuses a completed turn without the user message or the answer, writing nothing', async () => {
    const event = turn(0, 'I like tea.');
    for (const broken of [
      { ...event, messages: event.messages.filter((m) => m.role === 'user') },
      { ...event, messages: event.messages.filter((m) => m.role === 'assistant') },
      { ...event, messages: [] },
    ]) {
      const attempt = consolidateTurn(services, broken, log);
      await expect(attempt).rejects.toBeInstanceOf(ValidationError);
      await expect(attempt).rejects.toThrow(/completed but does not carry the user's message and the answer/);
    }
    expect(memoryIsEmpty()).toBe(true);
  });

  it('logs the proposals it leaves out, and warns when the profile is full', async () => {
    model.profile = () => ({
      ...noChanges,
      add: [{ category: 'interests', statement: 'The user likes tea.', evidence: 'something else' }],
      retract: [{ factId: 'nope', evidence: 'I like tea', reason: 'r' }],
    });
    await consolidateTurn(services, turn(0, 'I like tea.'), log);
    expect(log.lines.join('\n')).toMatch(
      /left out 2 proposed profile changes: retract "nope" \(unknown-fact\); add "The user likes tea\." \(evidence-not-in-user-text\)/,
    );
    expect(log.warnings).toEqual([]);
  });
});

describe('consolidateTurn on branches', () => {
  // Turn n is the n-th committed turn of the session: ordinals 2n and 2n + 1, whatever its branch.
  const main = (parent: number | null): TurnBranch => ({
    parentChatMessageId: parent === null ? null : chatId(parent),
    branchId: MAIN_BRANCH,
    gaps: [],
  });
  const fork = (parent: number | null, n: number, replaces: number, gaps: OrdinalGap[]): TurnBranch => ({
    parentChatMessageId: parent === null ? null : chatId(parent),
    branchId: chatId(n),
    alternativeOf: chatId(replaces),
    origin: 'edit',
    gaps,
  });
  const on = (parent: number, branch: TurnBranch): TurnBranch => ({
    ...branch,
    parentChatMessageId: chatId(parent),
  });
  const consolidate = (...events: MessageCompleted[]) =>
    events.reduce(
      (done, event) => done.then(() => consolidateTurn(services, event, log).then(() => undefined)),
      Promise.resolve(),
    );
  const statements = async (status = 'active') =>
    (await allFacts()).filter((fact) => fact.status === status).map((fact) => fact.statement);
  const queries: unknown[] = [];

  beforeEach(() => {
    queries.length = 0;
    const find = facts.findConsolidations.bind(facts);
    facts.findConsolidations = (...args) => {
      queries.push(args[2]);
      return find(...args);
    };
  });

  it('an edit takes back what the turns it replaces taught, and its summary starts from the turn before', async () => {
    await consolidate(
      turn(0, 'I like tea.', { branch: main(null) }),
      turn(1, 'I like jazz.', { branch: main(0) }),
      turn(2, 'I like chess.', { branch: main(1) }),
    );
    expect(queries).toEqual([]);
    expect(await statements()).toEqual([
      'The user likes tea.',
      'The user likes jazz.',
      'The user likes chess.',
    ]);

    // Turn 3 edits turn 1: it follows turn 0, and turns 1 and 2 (ordinals 2 to 5) are off its path.
    const edit = fork(0, 3, 1, [{ from: 2, to: 6 }]);
    expect(await consolidateTurn(services, turn(3, 'I like opera.', { branch: edit }), log)).toEqual({
      status: 'consolidated',
      summary: 'written',
      profile: 'applied',
    });
    expect(await statements()).toEqual(['The user likes tea.', 'The user likes opera.']);
    expect(await allFacts()).toHaveLength(2);
    // The summary goes on from the one kept after turn 0, not from the stored one (which had jazz and chess).
    expect((model.inputs(CONVERSATION_SUMMARY_FORMAT).at(-1) as SummaryInput).previousSummary?.summary).toBe(
      'Asked: I like tea.',
    );
    expect(await summaryOf()).toMatchObject({
      summary: 'Asked: I like tea. Then: I like opera.',
      exchanges: 2,
      coveredThrough: 7,
      chatMessageId: chatId(3),
      gaps: [{ from: 2, to: 6 }],
    });
    const record = (n: number) => facts.getConsolidation(userId, sessionId, chatId(n));
    expect((await record(1))?.withdrawnAt).toBe(later);
    expect((await record(2))?.withdrawnAt).toBe(later);
    expect((await record(3))?.summaryAfter).toMatchObject({
      summary: 'Asked: I like tea. Then: I like opera.',
    });
    expect(log.lines.join('\n')).toMatch(/withdrew what 2 turns had changed/);
    // Three queries of the session's records: the turns leaving, those coming back, the summary to start from.
    expect(queries).toEqual([
      expect.objectContaining({ within: [{ from: 2, to: 6 }], withdrawn: false, changed: true }),
      expect.objectContaining({ outside: [{ from: 2, to: 6 }], withdrawn: true }),
      expect.objectContaining({ outside: [{ from: 2, to: 6 }], summarised: true, limit: 1 }),
    ]);

    // The edit's branch goes on: nothing more to move, no query.
    queries.length = 0;
    await consolidate(turn(4, 'I like golf.', { branch: on(3, edit) }));
    expect(queries).toEqual([]);
    expect(await statements()).toEqual([
      'The user likes tea.',
      'The user likes opera.',
      'The user likes golf.',
    ]);
  });

  it('a turn back on the earlier branch brings its facts and its summary back, and takes the other’s away', async () => {
    await consolidate(
      turn(0, 'I like tea.', { branch: main(null) }),
      turn(1, 'I like jazz.', { branch: main(0) }),
      turn(2, 'I like chess.', { branch: main(1) }),
    );
    const jazz = (await allFacts()).find((fact) => fact.statement === 'The user likes jazz.');
    const edit = fork(0, 3, 1, [{ from: 2, to: 6 }]);
    await consolidate(turn(3, 'I like opera.', { branch: edit }));
    const calls = model.requests.length;

    // The user switches back to the main line and continues its newest turn (2): the edit's turn is its gap.
    await consolidate(turn(4, 'I like golf.', { branch: { ...main(2), gaps: [{ from: 6, to: 8 }] } }));
    expect(await statements()).toEqual([
      'The user likes tea.',
      'The user likes jazz.',
      'The user likes chess.',
      'The user likes golf.',
    ]);
    expect((await allFacts()).find((fact) => fact.id === jazz?.id)).toEqual(jazz);
    expect((await facts.getConsolidation(userId, sessionId, chatId(3)))?.withdrawnAt).toBe(later);
    expect(await facts.getConsolidation(userId, sessionId, chatId(1))).not.toHaveProperty('withdrawnAt');
    // The model was asked about the new turn only: the main line's changes were applied again as recorded.
    expect(
      model.requests
        .slice(calls)
        .map((request) => request.name)
        .sort(),
    ).toEqual([CONVERSATION_SUMMARY_FORMAT, PROFILE_CHANGES_FORMAT]);
    expect(await summaryOf()).toMatchObject({
      summary: 'Asked: I like tea. Then: I like jazz. Then: I like chess. Then: I like golf.',
      exchanges: 4,
      gaps: [{ from: 6, to: 8 }],
    });
  });

  it('a contradiction taken back makes the earlier fact true again, and coming back replaces it again', async () => {
    model.profile = (input) => {
      const moved = /I moved to (\w+)/.exec(input.userMessage);
      const home = input.activeFacts.find((fact) => fact.statement.startsWith('The user lives in'));
      if (moved && home)
        return {
          ...noChanges,
          replace: [
            {
              factId: home.factId,
              category: 'personal_preferences',
              statement: `The user lives in ${moved[1]}.`,
              evidence: moved[0],
              reason: 'The user moved.',
            },
          ],
        };
      const lives = /I live in (\w+)/.exec(input.userMessage);
      return lives
        ? {
            ...noChanges,
            add: [
              {
                category: 'personal_preferences',
                statement: `The user lives in ${lives[1]}.`,
                evidence: lives[0],
              },
            ],
          }
        : noChanges;
    };
    await consolidate(
      turn(0, 'I live in Paris.', { branch: main(null) }),
      turn(1, 'I moved to Berlin.', { branch: main(0) }),
    );
    expect(await statements()).toEqual(['The user lives in Berlin.']);
    const paris = (await allFacts()).find((fact) => fact.statement === 'The user lives in Paris.');
    expect(paris).toMatchObject({ status: 'superseded', validUntil: at, changeReason: 'The user moved.' });

    // Turn 2 edits turn 1 into a question: Berlin leaves the profile, Paris is true again.
    await consolidate(turn(2, 'What is the weather?', { branch: fork(0, 2, 1, [{ from: 2, to: 4 }]) }));
    expect(await statements()).toEqual(['The user lives in Paris.']);
    expect(await allFacts()).toHaveLength(1);
    const reopened = (await allFacts()).find((fact) => fact.id === paris?.id);
    expect(reopened).not.toHaveProperty('validUntil');
    expect(reopened).not.toHaveProperty('supersededBy');
    expect(reopened).not.toHaveProperty('changeReason');

    // Back on turn 1's branch: Berlin replaces Paris again.
    await consolidate(turn(3, 'Thanks.', { branch: { ...main(1), gaps: [{ from: 4, to: 6 }] } }));
    expect(await statements()).toEqual(['The user lives in Berlin.']);
    expect((await allFacts()).find((fact) => fact.id === paris?.id)).toMatchObject({
      status: 'superseded',
      validUntil: at,
      changeReason: 'The user moved.',
    });
  });

  it('undoes a retraction, and keeps a fact that a kept turn or another conversation also stated', async () => {
    model.profile = (input) => {
      const tea = input.activeFacts.find((fact) => fact.statement === 'The user likes tea.');
      if (/I no longer like tea/.test(input.userMessage) && tea)
        return {
          ...likesProposal(input),
          retract: [{ factId: tea.factId, evidence: 'I no longer like tea', reason: 'Changed.' }],
        };
      return likesProposal(input);
    };
    const other = (await sessions.create(userId)).sessionId;
    await consolidate(turn(0, 'I like jazz.', { session: other }));
    await consolidate(
      turn(1, 'I like tea.', { branch: main(null) }),
      turn(2, 'I like jazz. I no longer like tea.', { branch: main(1) }),
    );
    expect(await statements()).toEqual(['The user likes jazz.']);
    expect(await statements('retracted')).toEqual(['The user likes tea.']);
    // Turn 2 said jazz again: the fact of the other conversation has both sources.
    expect((await allFacts())[0]?.provenance.map((known) => known.sessionId)).toEqual([other, sessionId]);

    await consolidate(turn(3, 'Hello again.', { branch: fork(1, 3, 2, [{ from: 4, to: 6 }]) }));
    expect(await statements()).toEqual(['The user likes jazz.', 'The user likes tea.']);
    // Jazz keeps the other conversation's source only.
    const jazz = (await allFacts()).find((fact) => fact.statement === 'The user likes jazz.');
    expect(jazz?.provenance.map((known) => known.sessionId)).toEqual([other]);
  });

  it('never brings back a fact the user forgot when its branch comes back', async () => {
    await consolidate(
      turn(0, 'I like tea.', { branch: main(null) }),
      turn(1, 'I like jazz.', { branch: main(0) }),
    );
    const tea = (await allFacts()).find((fact) => fact.statement === 'The user likes tea.');
    expect(await forgetFact(services, userId, tea!.id)).toBe(true);
    // An edit of the first message leaves both turns; a switch back to turn 1 brings them back.
    await consolidate(turn(2, 'Hello.', { branch: fork(null, 2, 0, [{ from: 0, to: 4 }]) }));
    expect(await allFacts()).toEqual([]);
    await consolidate(turn(3, 'Again.', { branch: { ...main(1), gaps: [{ from: 4, to: 6 }] } }));
    expect(await statements()).toEqual(['The user likes jazz.']);
  });

  it('changes nothing when a forking turn is delivered again, and leaves out a replayed turn of a branch left', async () => {
    await consolidate(
      turn(0, 'I like tea.', { branch: main(null) }),
      turn(1, 'I like jazz.', { branch: main(0) }),
    );
    const edit = turn(2, 'I like opera.', { branch: fork(0, 2, 1, [{ from: 2, to: 4 }]) });
    await consolidate(edit);
    const once = snapshot();
    const calls = model.requests.length;
    expect(await consolidateTurn(services, edit, log)).toEqual({
      status: 'consolidated',
      summary: 'already-covered',
      profile: 'already-applied',
    });
    expect(snapshot()).toEqual(once);
    expect(model.requests).toHaveLength(calls);

    // Turn 1's event arrives again from the dead-letter queue, its record lost: it is not on the kept path.
    facts.records.delete(`${userId}\u0000${consolidationId(sessionId, chatId(1))}`);
    expect(await consolidateTurn(services, turn(1, 'I like jazz.', { branch: main(0) }), log)).toEqual({
      status: 'consolidated',
      summary: 'already-covered',
      profile: 'left-out',
    });
    expect(await statements()).toEqual(['The user likes tea.', 'The user likes opera.']);
    expect(log.lines.join('\n')).toMatch(/its branch is not the one the user kept/);
  });
});

describe('consolidateTurn on the real wire', () => {
  let scripted: ScriptedModel;
  let gateway: LlmGateway;

  beforeAll(async () => {
    scripted = await startScriptedModel((request) => {
      if (request.response_format?.json_schema?.name === PROFILE_CHANGES_FORMAT)
        // A model that was fooled by the tool result: it proposes what the tool said, quoting the tool.
        return {
          content: JSON.stringify({
            ...noChanges,
            add: [
              {
                category: 'interests',
                statement: 'The user loves spiders.',
                evidence: 'the user loves spiders',
              },
              { category: 'interests', statement: 'The user likes frogs.', evidence: 'I like frogs' },
            ],
          }),
        };
      return {
        content: JSON.stringify({
          summary: 'The user asked what a search says about them.',
          themes: ['search'],
          persons: [],
          places: [],
          user_sentiment: 'neutral',
        }),
      };
    });
    const real = createLlmGateway(
      {
        kind: 'openai-compatible',
        baseUrl: scripted.baseUrl,
        chatModel: 'scripted-model',
        embeddingModel: 'e',
      },
      { maxRetries: 0, timeoutMs: 5_000 },
    );
    // The scripted model serves chat completions only; the embedding is not what this test is about.
    gateway = {
      completeJson: (request) => real.completeJson(request),
      embed: (texts) => Promise.resolve(texts.map(() => [1, 0, 0])),
      streamChat: (request, onDelta) => real.streamChat(request, onDelta),
      probe: () => real.probe(),
    };
  });
  afterAll(() => scripted.close());

  it('never makes a fact of a tool result, and sends the profile call no assistant, tool or system prompt text', async () => {
    const event = turn(0, 'I like frogs. Search what the web says about me.', {
      answer: 'The search says you love spiders.',
      toolResult: 'Profile page: the user loves spiders and collects them.',
      systemPrompt: {
        content: 'You are a helpful assistant. SECRET-PROMPT',
        personalised: false,
        createdAt: at,
      },
    });
    await consolidateTurn({ ...services, llm: gateway }, event, log);

    expect((await allFacts()).map((f) => f.statement)).toEqual(['The user likes frogs.']);
    expect(log.lines.join('\n')).toMatch(/add "The user loves spiders\." \(evidence-not-in-user-text\)/);
    const profileRequest = scripted.requests.find(
      (r) => r.response_format?.json_schema?.name === PROFILE_CHANGES_FORMAT,
    );
    const sent = JSON.stringify(profileRequest?.messages);
    expect(profileRequest?.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(sent).toContain('I like frogs. Search what the web says about me.');
    for (const foreign of ['spiders', 'Profile page', 'The search says', 'SECRET-PROMPT', 'web_search'])
      expect(sent).not.toContain(foreign);
    // The summary sees the answer's words but never the tool's output.
    const summaryRequest = scripted.requests.find(
      (r) => r.response_format?.json_schema?.name === CONVERSATION_SUMMARY_FORMAT,
    );
    expect(JSON.stringify(summaryRequest?.messages)).not.toContain('Profile page');
  });
});

describe('rememberTurn', () => {
  class RecordingNotices implements MemoryNotices {
    readonly sent: { userId: string; notice: MemoryChanged }[] = [];
    failure: Error | undefined;
    memoryChanged(userId: string, notice: MemoryChanged): Promise<void> {
      if (this.failure) return Promise.reject(this.failure);
      this.sent.push({ userId, notice });
      return Promise.resolve();
    }
  }

  it("tells the user's pages once that a turn changed memory, and nothing for a redelivery or a skipped turn", async () => {
    const notices = new RecordingNotices();
    const remembering = { ...services, notices };
    await rememberTurn(remembering, turn(0, 'I like tea'), log);
    expect(notices.sent).toEqual([
      {
        userId,
        notice: { type: 'memory-changed', sessionId, chatMessageId: chatId(0), summary: true, profile: true },
      },
    ]);
    expect(memoryChangedSchema.parse(notices.sent[0]?.notice)).toEqual(notices.sent[0]?.notice);

    await rememberTurn(remembering, turn(0, 'I like tea'), log);
    await rememberTurn(remembering, turn(1, 'secret', { useMemory: false }), log);
    expect(notices.sent).toHaveLength(1);
  });

  it('keeps what it remembered when the notice cannot be sent, and says so', async () => {
    const notices = new RecordingNotices();
    notices.failure = new Error('Web PubSub is down');
    const outcome = await rememberTurn({ ...services, notices }, turn(0, 'I like tea'), log);
    expect(outcome).toEqual({ status: 'consolidated', summary: 'written', profile: 'applied' });
    expect((await facts.list(userId)).map((fact) => fact.statement)).toEqual(['The user likes tea.']);
    expect(log.warnings.join('\n')).toContain('Web PubSub is down');
  });
});
