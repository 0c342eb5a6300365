// Memory scopes over in-memory ports: what a conversation reads and writes, a turn consolidated into its scope only
// (deciding against that scope's facts, and withdrawn and restored there), a fact moved only into the caller's
// scopes, the prompt's read, and an import that keeps each line's scope and refuses one not the caller's.
import { describe, expect, it } from 'vitest';
import { MemoryConversationSummaries, MemoryProfileFacts } from '../../test/support/in-memory-memory.js';
import { MemorySessions } from '../../test/support/in-memory-ports.js';
import { completedExchange } from '../../test/support/message-completed.js';
import {
  isMemoryScope,
  readScopes,
  scopeOf,
  writeScope,
  type MemoryScope,
} from '../conversation/memory-scope.js';
import { NotFoundError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import type { CompleteJsonRequest, LlmGateway, LlmReply } from '../llm/llm-gateway.js';
import { withdrawRecord, applyRecord } from './apply-changes.js';
import { consolidateTurn } from './consolidate-turn.js';
import type { ProfileFact } from './contracts.js';
import { importMemory } from './memory-transfer.js';
import { PROFILE_CHANGES_FORMAT } from './memory-llm.js';
import { moveFact, type ScopeAccess } from './memory-scopes.js';
import { fetchProfileWithin } from './personalised-prompt.js';

const ASSISTANT = 'asst-0123456789abcdef0123456789abcdef';
const PROJECT = 'proj-0123456789abcdef0123456789abcdef';
const OTHER_PROJECT = 'proj-fedcba9876543210fedcba9876543210';
const userId = 'user_001';
const caller: Caller = { userId, identityProvider: 'dev' };
const at = '2026-11-22T10:00:00.000Z';

describe('memory scopes', () => {
  it('are user, assistant:<assistantId> or project:<projectId>, and an item without one is the user’s', () => {
    expect(isMemoryScope('user')).toBe(true);
    expect(isMemoryScope(`assistant:${ASSISTANT}`)).toBe(true);
    expect(isMemoryScope(`project:${PROJECT}`)).toBe(true);
    for (const bad of [
      '',
      'users',
      `project:${ASSISTANT}`,
      `assistant:${PROJECT}`,
      'project:..',
      `project:${PROJECT}:x`,
    ])
      expect(isMemoryScope(bad), bad).toBe(false);
    expect(scopeOf({})).toBe('user');
    expect(scopeOf({ scope: `project:${PROJECT}` })).toBe(`project:${PROJECT}`);
  });

  it('a conversation reads the shared memory, its own assistant’s and its project’s, and writes one of them', () => {
    const own = { assistantId: ASSISTANT, version: 1, ownMemory: true as const };
    const shared = { assistantId: ASSISTANT, version: 1 };
    expect(readScopes({})).toEqual(['user']);
    expect(writeScope({})).toBe('user');
    expect(readScopes({ assistant: shared })).toEqual(['user']);
    expect(writeScope({ assistant: shared })).toBe('user');
    expect(readScopes({ assistant: own })).toEqual(['user', `assistant:${ASSISTANT}`]);
    expect(writeScope({ assistant: own })).toBe(`assistant:${ASSISTANT}`);
    expect(readScopes({ assistant: own, projectId: PROJECT })).toEqual([
      'user',
      `assistant:${ASSISTANT}`,
      `project:${PROJECT}`,
    ]);
    // In a project, the project is where what is learned stays.
    expect(writeScope({ assistant: own, projectId: PROJECT })).toBe(`project:${PROJECT}`);
  });
});

/** Proposes "The user likes X." for each "I like X", and records the active facts each call was shown. */
class LikesModel implements LlmGateway {
  readonly shown: string[][] = [];
  completeJson<T>(request: CompleteJsonRequest<T>): Promise<T> {
    const input = JSON.parse(request.messages.at(-1)?.content ?? '{}') as {
      userMessage?: string;
      activeFacts?: { statement: string }[];
    };
    if (request.name !== PROFILE_CHANGES_FORMAT)
      return Promise.resolve(
        request.schema.parse({
          summary: 'A talk.',
          themes: [],
          persons: [],
          places: [],
          user_sentiment: 'neutral',
        }),
      );
    this.shown.push((input.activeFacts ?? []).map((fact) => fact.statement));
    const add = [...(input.userMessage ?? '').matchAll(/I like ([\w ]+)/g)].map((match) => ({
      category: 'interests',
      statement: `The user likes ${match[1]}.`,
      evidence: match[0],
    }));
    return Promise.resolve(request.schema.parse({ add, reaffirm: [], replace: [], retract: [] }));
  }
  embed(texts: string[]): Promise<number[][]> {
    return Promise.resolve(texts.map(() => [1, 0, 0]));
  }
  streamChat(): Promise<LlmReply> {
    return Promise.reject(new Error('not used'));
  }
  probe() {
    return Promise.resolve({ ok: true, detail: 'likes model' });
  }
}

function world() {
  const sessions = new MemorySessions();
  const facts = new MemoryProfileFacts();
  const summaries = new MemoryConversationSummaries();
  const llm = new LikesModel();
  const log = { log: () => undefined, warn: () => undefined };
  const services = { facts, summaries, llm, sessions, now: () => new Date(at) };
  async function learn(question: string, scope?: MemoryScope) {
    const { sessionId } = await sessions.create(userId);
    const event = completedExchange({
      userId,
      sessionId,
      chatMessageId: '0f8fad5b-d9cb-469f-a165-70867728950e',
      ordinal: 0,
      question,
      at,
      answer: { content: 'Noted.' },
    });
    await consolidateTurn(services, scope === undefined ? event : { ...event, memoryScope: scope }, log);
    return sessionId;
  }
  const statements = (list: ProfileFact[]) => list.map((fact) => `${scopeOf(fact)} ${fact.statement}`).sort();
  return { facts, summaries, llm, learn, statements };
}

describe('consolidating a scoped turn', () => {
  it('writes its facts and summary to its scope, deciding against that scope’s facts only', async () => {
    const w = world();
    await w.learn('I like tea.');
    const inProject = await w.learn('I like roses.', `project:${PROJECT}`);
    // The project's turn was shown none of the shared memory's facts: it neither restates nor replaces them.
    expect(w.llm.shown).toEqual([[], []]);
    await w.learn('I like tea.', `project:${PROJECT}`);
    expect(w.llm.shown[2]).toEqual(['The user likes roses.']);
    expect(w.statements(await w.facts.list(userId))).toEqual([
      `project:${PROJECT} The user likes roses.`,
      `project:${PROJECT} The user likes tea.`,
      'user The user likes tea.',
    ]);
    expect((await w.summaries.get(userId, inProject))?.summary.scope).toBe(`project:${PROJECT}`);
  });

  it('withdraws and restores its facts in its scope', async () => {
    const w = world();
    const sessionId = await w.learn('I like roses.', `project:${PROJECT}`);
    const [record] = await w.facts.findConsolidations(userId, sessionId, { before: 99, order: 'asc' });
    expect(record?.scope).toBe(`project:${PROJECT}`);
    await withdrawRecord(w.facts, record!, at);
    expect(await w.facts.list(userId, { statuses: ['active'] })).toEqual([]);
    await applyRecord(w.facts, record!);
    expect(w.statements(await w.facts.list(userId))).toEqual([`project:${PROJECT} The user likes roses.`]);
  });

  it('gives a new conversation the facts of the scopes it reads, in one read', async () => {
    const w = world();
    await w.learn('I like tea.');
    await w.learn('I like roses.', `project:${PROJECT}`);
    await w.learn('I like taxes.', `project:${OTHER_PROJECT}`);
    await w.learn('I like bees.', `assistant:${ASSISTANT}`);
    let reads = 0;
    const counted = {
      list: (...args: Parameters<MemoryProfileFacts['list']>) => (reads++, w.facts.list(...args)),
    };
    const read = await fetchProfileWithin(counted, userId, 2_000, undefined, [
      'user',
      `project:${PROJECT}`,
      `assistant:${ASSISTANT}`,
    ]);
    expect(reads).toBe(1);
    expect(read?.map((fact) => fact.statement).sort()).toEqual([
      'The user likes bees.',
      'The user likes roses.',
      'The user likes tea.',
    ]);
    const shared = await fetchProfileWithin(w.facts, userId, 2_000, undefined);
    expect(shared?.map((fact) => fact.statement)).toEqual(['The user likes tea.']);
  });
});

describe('moving a fact', () => {
  /** The caller's own project is theirs; anything else is refused as unknown. */
  const access: ScopeAccess = (_caller, scope) =>
    scope === 'user' || scope === `project:${PROJECT}`
      ? Promise.resolve()
      : Promise.reject(new NotFoundError(`No ${scope} for this user.`));

  it('moves it into one of the caller’s scopes, keeping its provenance, and nowhere else', async () => {
    const w = world();
    await w.learn('I like tea.');
    const [tea] = await w.facts.list(userId);
    const moved = await moveFact({ facts: w.facts, access }, caller, tea!.id, `project:${PROJECT}`);
    expect(moved).toEqual({ ...tea, scope: `project:${PROJECT}`, updatedAt: moved.updatedAt });
    await expect(
      moveFact({ facts: w.facts, access }, caller, tea!.id, `project:${OTHER_PROJECT}`),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      moveFact({ facts: w.facts, access }, caller, 'fact-0000000000000000', 'user'),
    ).rejects.toBeInstanceOf(NotFoundError);
    // Back to the shared memory: the item keeps no scope, as those written before scopes.
    const back = await moveFact({ facts: w.facts, access }, caller, tea!.id, 'user');
    expect('scope' in back).toBe(false);
    expect((await w.facts.get(userId, tea!.id))?.fact.provenance).toEqual(tea!.provenance);
  });
});

describe('importing scoped lines', () => {
  const line = (statement: string, scope: string) =>
    JSON.stringify({ type: 'fact', scope, category: 'interests', statement, status: 'active' });

  it('keeps each line’s scope, the same statement in two scopes being two facts', async () => {
    const w = world();
    const ndjson = [
      line('The user likes roses.', `project:${PROJECT}`),
      line('The user likes roses.', 'user'),
    ].join('\n');
    const checked: string[] = [];
    const services = {
      facts: w.facts,
      summaries: w.summaries,
      llm: w.llm,
      access: (scope: MemoryScope) => (checked.push(scope), Promise.resolve()),
    };
    const result = await importMemory(services, userId, { ndjson }, { dryRun: false });
    expect(result.changes.map((change) => change.scope).sort()).toEqual([`project:${PROJECT}`, 'user']);
    expect(checked).toEqual([`project:${PROJECT}`]);
    expect(w.statements(await w.facts.list(userId))).toEqual([
      `project:${PROJECT} The user likes roses.`,
      'user The user likes roses.',
    ]);
    expect(await importMemory(services, userId, { ndjson }, { dryRun: false })).toMatchObject({
      changes: [],
      unchanged: 2,
    });
  });

  it('refuses a scope that is not the caller’s before writing anything', async () => {
    const w = world();
    const ndjson = [
      line('The user likes tea.', 'user'),
      line('The user likes roses.', `project:${PROJECT}`),
    ].join('\n');
    const services = {
      facts: w.facts,
      summaries: w.summaries,
      llm: w.llm,
      access: (scope: MemoryScope) => Promise.reject(new NotFoundError(`No ${scope} for this user.`)),
    };
    await expect(importMemory(services, userId, { ndjson }, { dryRun: false })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(await w.facts.list(userId)).toEqual([]);
  });
});
