// Forgetting over the in-memory fakes: everything of a user (and nobody else's), one fact, and one conversation
// (its summary, its consolidation records, the facts only it taught, and its sources in facts said elsewhere), also
// when the memory worker adds another conversation's source to one of those facts at the same moment.
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryConversationSummaries, MemoryProfileFacts } from '../../test/support/in-memory-memory.js';
import {
  consolidationRecord,
  factSource,
  onDay,
  profileFact,
  summaryDocument,
  storeFacts,
} from '../../test/support/memory-fixtures.js';
import { consolidationId, type FactSource, type ProfileFact } from './contracts.js';
import { forgetAll, forgetConversation, forgetFact, type ForgetServices } from './forget-memories.js';

const S1 = '11111111-1111-4111-8111-111111111111';
const S2 = '22222222-2222-4222-8222-222222222222';
const NOW = new Date('2026-11-23T09:00:00.000Z');

let summaries: MemoryConversationSummaries;
let facts: MemoryProfileFacts;
let services: ForgetServices;
beforeEach(() => {
  summaries = new MemoryConversationSummaries();
  facts = new MemoryProfileFacts();
  services = { summaries, facts, now: () => NOW };
});

const at = onDay;
const source = (sessionId: string, day: number, turn = 'turn'): FactSource =>
  factSource(sessionId, day, `${turn}-${sessionId.slice(0, 4)}-${day}`);
const fact = (id: string, provenance: FactSource[], userId = 'user_001'): ProfileFact =>
  profileFact(userId, id, provenance);
const summary = (sessionId: string, userId = 'user_001') => summaryDocument(userId, sessionId);
const record = (sessionId: string, chatMessageId: string, userId = 'user_001') =>
  consolidationRecord(userId, sessionId, chatMessageId);

describe('forgetAll', () => {
  it("removes every summary, fact and record of the user, and nobody else's", async () => {
    await summaries.put(summary(S1), undefined);
    await summaries.put(summary(S2), undefined);
    await summaries.put(summary(S1, 'user_002'), undefined);
    await storeFacts(facts, fact('f1', [source(S1, 1)]));
    await storeFacts(facts, { ...fact('f2', [source(S2, 2)]), status: 'superseded', validUntil: at(4) });
    await storeFacts(facts, fact('theirs', [source(S1, 1)], 'user_002'));
    await facts.createConsolidation(record(S1, 'c1'));

    expect(await forgetAll(services, 'user_001')).toEqual({ profileItems: 3, summaries: 2 });
    expect(await facts.list('user_001')).toEqual([]);
    expect((await summaries.list('user_001', { limit: 10 })).summaries).toEqual([]);
    expect((await facts.list('user_002')).map((f) => f.id)).toEqual(['theirs']);
    expect(await summaries.get('user_002', S1)).toBeDefined();
    // Again: nothing left, nothing to do.
    expect(await forgetAll(services, 'user_001')).toEqual({ profileItems: 0, summaries: 0 });
  });
});

describe('forgetFact', () => {
  it('removes one fact of the user whatever its status; another id or user finds nothing', async () => {
    await storeFacts(facts, { ...fact('f1', [source(S1, 1)]), status: 'retracted', validUntil: at(2) });
    await storeFacts(facts, fact('f2', [source(S1, 1)]));
    expect(await forgetFact(services, 'user_002', 'f1')).toBe(false);
    expect(await forgetFact(services, 'user_001', 'f1')).toBe(true);
    expect(await forgetFact(services, 'user_001', 'f1')).toBe(false);
    expect((await facts.list('user_001')).map((f) => f.id)).toEqual(['f2']);
  });

  it('takes the fact out of every record that would state it again, keeping what the records ended', async () => {
    await storeFacts(facts, fact('f1', [source(S1, 1)]), fact('old', [source(S2, 1)]));
    await facts.createConsolidation({
      ...record(S1, 'c1'),
      changes: [
        { op: 'add', factId: 'f1', category: 'interests', statement: 'Statement f1.' },
        { op: 'add', factId: 'f9', category: 'goals', statement: 'Another.' },
      ],
    });
    await facts.createConsolidation({
      ...record(S2, 'c2'),
      changes: [
        {
          op: 'replace',
          factId: 'old',
          newFactId: 'f1',
          category: 'interests',
          statement: 'x',
          reason: 'Moved.',
        },
        { op: 'reaffirm', factId: 'f1' },
      ],
    });
    await facts.createConsolidation(record(S2, 'c3'));
    expect(await forgetFact(services, 'user_001', 'f1')).toBe(true);
    const changes = async (sessionId: string, chatMessageId: string) =>
      (await facts.getConsolidation('user_001', sessionId, chatMessageId))?.changes;
    expect(await changes(S1, 'c1')).toEqual([
      { op: 'add', factId: 'f9', category: 'goals', statement: 'Another.' },
    ]);
    expect(await changes(S2, 'c2')).toEqual([{ op: 'retract', factId: 'old', reason: 'Moved.' }]);
    expect(await changes(S2, 'c3')).toEqual([]);
  });
});

describe('forgetConversation', () => {
  it('removes the summary, the records and the facts only it taught; keeps the rest without its sources', async () => {
    await summaries.put(summary(S1), undefined);
    await summaries.put(summary(S2), undefined);
    const onlyHere = fact('only-here', [source(S1, 1), source(S1, 2, 'again')]);
    const alsoElsewhere = fact('also-elsewhere', [source(S1, 1), source(S2, 5)]);
    const saidLaterHere = fact('said-later-here', [source(S2, 1), source(S1, 6)]);
    const elsewhere = fact('elsewhere', [source(S2, 2)]);
    const supersededHere = {
      ...fact('superseded-here', [source(S1, 1)]),
      status: 'superseded' as const,
      validUntil: at(2),
      supersededBy: 'only-here',
    };
    await storeFacts(facts, onlyHere, alsoElsewhere, saidLaterHere, elsewhere, supersededHere);
    await facts.createConsolidation(record(S1, 'c1'));
    await facts.createConsolidation(record(S1, 'c2'));
    await facts.createConsolidation(record(S2, 'c3'));
    await storeFacts(facts, fact('theirs', [source(S1, 1)], 'user_002'));

    expect(await forgetConversation(services, 'user_001', S1)).toEqual({
      summary: true,
      factsDeleted: 2,
      factsKept: 2,
      consolidations: 2,
    });

    expect(await summaries.get('user_001', S1)).toBeUndefined();
    expect(await summaries.get('user_001', S2)).toBeDefined();
    expect(await facts.list('user_001')).toEqual([
      // Learnt in the forgotten conversation, said again later: true since it was said again.
      {
        ...alsoElsewhere,
        provenance: [source(S2, 5)],
        validFrom: at(5),
        updatedAt: NOW.toISOString(),
      },
      { ...saidLaterHere, provenance: [source(S2, 1)], updatedAt: NOW.toISOString() },
      elsewhere,
    ]);
    expect([...facts.records.values()].map((r) => r.id)).toEqual([consolidationId(S2, 'c3')]);
    expect(await facts.fromSession('user_001', S1)).toEqual([]);
    expect((await facts.list('user_002')).map((f) => f.id)).toEqual(['theirs']);
  });

  it('is idempotent: a second run, or a conversation never summarised, finds nothing to do', async () => {
    await summaries.put(summary(S1), undefined);
    await storeFacts(facts, fact('f', [source(S1, 1), source(S2, 2)]));
    await forgetConversation(services, 'user_001', S1);
    const after = await facts.list('user_001');
    expect(await forgetConversation(services, 'user_001', S1)).toEqual({
      summary: false,
      factsDeleted: 0,
      factsKept: 0,
      consolidations: 0,
    });
    expect(await facts.list('user_001')).toEqual(after);
  });

  describe('while the memory worker reaffirms a fact of it from another conversation', () => {
    const S3 = '33333333-3333-4333-8333-333333333333';
    /** What the worker's reaffirmation writes: the fact with one more source, on the version it read. */
    async function reaffirm(factId: string, said: FactSource): Promise<void> {
      const stored = await facts.get('user_001', factId);
      const fact = stored!.fact;
      const written = await facts.put({ ...fact, provenance: [...fact.provenance, said] }, stored!.version);
      expect(written).toBe('written');
    }

    it('keeps a fact it was about to delete, with the new source only, when the reaffirmation lands first', async () => {
      const onlyHere = fact('f', [source(S1, 1)]);
      await storeFacts(facts, onlyHere);
      const remove = facts.delete.bind(facts);
      let deletes = 0;
      facts.delete = async (userId, factId, version) => {
        if (deletes++ === 0) await reaffirm(factId, source(S2, 2));
        return remove(userId, factId, version);
      };

      expect(await forgetConversation(services, 'user_001', S1)).toMatchObject({
        factsDeleted: 0,
        factsKept: 1,
      });
      expect(await facts.list('user_001')).toEqual([
        { ...onlyHere, provenance: [source(S2, 2)], validFrom: at(2), updatedAt: NOW.toISOString() },
      ]);
    });

    it('keeps the new source when the reaffirmation lands before its rewrite', async () => {
      await storeFacts(facts, fact('f', [source(S1, 1), source(S2, 2)]));
      const put = facts.put.bind(facts);
      let puts = 0;
      facts.put = async (written, version) => {
        if (puts++ === 0) await reaffirm(written.id, source(S3, 3));
        return put(written, version);
      };

      expect(await forgetConversation(services, 'user_001', S1)).toMatchObject({
        factsDeleted: 0,
        factsKept: 1,
      });
      expect((await facts.list('user_001')).map((f) => f.provenance)).toEqual([
        [source(S2, 2), source(S3, 3)],
      ]);
    });
  });

  it("leaves another user's conversation of the same id alone", async () => {
    await summaries.put(summary(S1, 'user_002'), undefined);
    await storeFacts(facts, fact('theirs', [source(S1, 1)], 'user_002'));
    await facts.createConsolidation(record(S1, 'c1', 'user_002'));
    await forgetConversation(services, 'user_001', S1);
    expect(await summaries.get('user_002', S1)).toBeDefined();
    expect(await facts.get('user_002', 'theirs')).toBeDefined();
    expect(facts.records.size).toBe(1);
  });
});
