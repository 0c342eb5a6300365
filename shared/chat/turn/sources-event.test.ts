// The knowledge-base sources a turn's searches found, over in-memory ports: sent as a `sources` event before the text
// that cites them, once per round that added to them, and kept on the answer, its announcement and a failed turn.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  Crash,
  input,
  ref,
  round0,
  ScriptedModel,
  toolCallReply,
  TurnFixture,
} from '../../../test/support/turn-fixture.js';
import { MAX_TURN_SOURCES } from '../../conversation/sources.js';
import type { KnowledgeSearchHit } from '../../knowledge/contracts.js';
import type { LlmReply } from '../../llm/llm-gateway.js';
import type { ChatEvent } from '../../streaming/contracts.js';
import { answerText } from '../../streaming/turn-transcript.js';
import { sourceOf } from '../../tools/knowledge-search.js';
import type { MessageCompleted } from '../../conversation/message-completed.js';
import { failTurn } from './fail-turn.js';
import { llmStep } from './llm-step.js';
import { runTool } from './run-tool.js';

let t: TurnFixture;

beforeEach(() => {
  t = new TurnFixture();
});

describe('the sources of a turn', () => {
  describe('knowledge-base sources', () => {
    const hit = (n: number, title = 'Employee Handbook'): KnowledgeSearchHit => ({
      chunkId: `doc:${n}`,
      documentId: 'a'.repeat(32),
      title,
      headings: [],
      pages: [n],
      text: `Passage ${n} of the handbook.`,
      library: 'shared',
      score: 1 / (60 + n),
      similarity: 0.5,
      citation: `${title}, p. ${n}`,
    });
    const searchFor = (query: string, id = 'call_k'): LlmReply => ({
      content: '',
      reasoning: '',
      toolCalls: [{ id, name: 'search_knowledge_base', arguments: JSON.stringify({ query }) }],
      finishReason: 'tool_calls',
    });
    const cites: LlmReply = {
      content: 'Parents get twenty weeks [Employee Handbook, p. 1].',
      reasoning: '',
      toolCalls: [],
      finishReason: 'stop',
    };
    const types = (stream: readonly ChatEvent[]) =>
      stream.map((e) => e.type).filter((type, i, all) => type !== 'content' || all[i - 1] !== type);
    const sourcesEvents = () =>
      t.storedEvents().flatMap((e) => (e.type === 'sources' ? [e.sources.map((s) => s.chunkId)] : []));

    beforeEach(() => {
      t.knowledge.set('parental leave', [hit(1), hit(2)]);
      t.knowledge.set('leave split', [hit(2), hit(3)]);
    });

    /** Runs rounds 0..n-1 of the scripted turn, each tool round's calls in turn; the last round answers. */
    async function runRounds(): Promise<void> {
      let firstSeq = 1;
      for (let round = 0; ; round++) {
        const step = await llmStep(t.services(), {
          ...round0,
          round,
          firstSeq,
          ...(round > 0 ? { message: undefined } : {}),
        });
        if (step.outcome === 'answered') return;
        for (const call of step.toolCalls)
          await runTool(t.services(), { ...ref, round, index: call.index, seq: step.nextSeq + call.index });
        firstSeq = step.nextSeq + step.toolCalls.length;
      }
    }

    it('stream what a search found before the answer, and keep it on the answer, its announcement and the tool result', async () => {
      t.model = new ScriptedModel([searchFor('parental leave'), cites]);
      await runRounds();
      const stream = t.storedEvents();
      expect(stream.map((e) => e.seq)).toEqual(stream.map((_, i) => i + 1));
      expect(types(stream)).toEqual([
        'message-start',
        'tool-call',
        'tool-result',
        'sources',
        'content',
        'message-end',
      ]);
      const expected = [sourceOf(hit(1)), sourceOf(hit(2))];
      expect(stream.find((e) => e.type === 'sources')).toMatchObject({ seq: 4, sources: expected });
      expect(t.events.sent).toEqual(stream);
      expect(t.committedAnswer()?.sources).toEqual(expected);
      const announced = t.published[0]?.body as MessageCompleted;
      expect(announced.messages.find((m) => m.role === 'assistant')?.sources).toEqual(expected);
      expect([...t.turns.results.values()][0]?.sources).toEqual(expected);
      // The model read the passages with their citations.
      expect(t.model.requests[1]?.messages.at(-1)?.content).toContain('"citation":"Employee Handbook, p. 1"');
    });

    it('send the turn’s sources so far after each round that found some: every round counted, each chunk once', async () => {
      t.model = new ScriptedModel([
        searchFor('parental leave'),
        searchFor('leave split', 'call_2'),
        toolCallReply,
        cites,
      ]);
      await runRounds();
      // Round 1 follows the first search, round 2 the second; round 3 follows add_numbers, which found nothing.
      expect(sourcesEvents()).toEqual([
        ['doc:1', 'doc:2'],
        ['doc:1', 'doc:2', 'doc:3'],
      ]);
      const stream = t.storedEvents();
      expect(stream.findIndex((e) => e.type === 'sources')).toBeLessThan(
        stream.findIndex((e) => e.type === 'content'),
      );
      expect(t.committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2', 'doc:3']);
      expect(t.committedAnswer()?.sources?.[1]).toEqual(sourceOf(hit(2)));
    });

    it('send no sources event after a round that found only chunks already listed', async () => {
      t.model = new ScriptedModel([
        searchFor('parental leave'),
        searchFor('parental leave', 'call_2'),
        searchFor('leave split', 'call_3'),
        cites,
      ]);
      await runRounds();
      expect(sourcesEvents()).toEqual([
        ['doc:1', 'doc:2'],
        ['doc:1', 'doc:2', 'doc:3'],
      ]);
      expect(types(t.storedEvents())).toEqual([
        'message-start',
        'tool-call',
        'tool-result',
        'sources',
        'tool-call',
        'tool-result',
        'tool-call',
        'tool-result',
        'sources',
        'content',
        'message-end',
      ]);
      expect(t.committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2', 'doc:3']);
    });

    it(`send no sources event once ${MAX_TURN_SOURCES} are listed, while the model still reads what later searches find`, async () => {
      const many = Array.from({ length: MAX_TURN_SOURCES + 5 }, (_, n) => hit(n + 1));
      t.knowledge.set('first', many.slice(0, 10));
      t.knowledge.set('second', many.slice(10, MAX_TURN_SOURCES));
      t.knowledge.set('third', many.slice(MAX_TURN_SOURCES));
      t.model = new ScriptedModel([
        searchFor('first'),
        searchFor('second', 'call_2'),
        searchFor('third', 'call_3'),
        cites,
      ]);
      await runRounds();
      expect(sourcesEvents().map((listed) => listed.length)).toEqual([10, MAX_TURN_SOURCES]);
      expect(t.committedAnswer()?.sources).toHaveLength(MAX_TURN_SOURCES);
      const read = t.model.requests[3]?.messages.at(-1)?.content ?? '';
      expect(read).toContain(`"citation":"Employee Handbook, p. ${MAX_TURN_SOURCES + 1}"`);
    });

    it('leave the event and the field out when the searches found nothing', async () => {
      t.model = new ScriptedModel([searchFor('boats'), cites]);
      await runRounds();
      expect(sourcesEvents()).toEqual([]);
      expect(t.committedAnswer()).not.toHaveProperty('sources');
    });

    it('send the sources once when a round that died is run again, and give no stored seq other content', async () => {
      t.model = new ScriptedModel([
        searchFor('parental leave'),
        { reply: cites, crash: new Crash(2) },
        cites,
      ]);
      const first = await llmStep(t.services(), round0);
      await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      const round1 = { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true };
      await expect(llmStep(t.services(), round1)).rejects.toThrow('died');
      const partial = t.storedEvents();
      expect(types(partial)).toEqual(['message-start', 'tool-call', 'tool-result', 'sources', 'content']);

      expect(await llmStep(t.services(), round1)).toMatchObject({ outcome: 'answered' });
      const all = t.storedEvents();
      expect(all.slice(0, partial.length)).toEqual(partial);
      expect(types(all.slice(partial.length))).toEqual(['discard', 'content', 'message-end']);
      expect(all[partial.length]).toMatchObject({ type: 'discard', fromSeq: 5, toSeq: partial.length });
      expect(sourcesEvents()).toHaveLength(1);
      expect(answerText(all)).toBe(cites.content);
      expect(t.committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2']);
    });

    it('send the same sources event again when the attempt that died had stored nothing of its round', async () => {
      t.model = new ScriptedModel([
        searchFor('parental leave'),
        { reply: cites, crash: new Crash(0) },
        cites,
      ]);
      const first = await llmStep(t.services(), round0);
      await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      const round1 = { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true };
      await expect(llmStep(t.services(), round1)).rejects.toThrow('died');
      const [sent] = t.storedEvents().filter((e) => e.type === 'sources');
      // As if the process had died before its first batch was stored.
      t.events.stored.delete(sent!.seq);
      t.events.batches.delete(sent!.seq);
      await llmStep(t.services(), round1);
      expect(t.storedEvents().filter((e) => e.type === 'sources')).toEqual([sent]);
    });

    it('keep the sources on the answer of a turn stopped before its next round, and stream them first', async () => {
      t.model = new ScriptedModel([searchFor('parental leave')]);
      const first = await llmStep(t.services(), round0);
      await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      await t.cancellations.request(ref, '2026-11-21T10:00:03.000Z');
      await llmStep(t.services(), { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true });
      expect(types(t.storedEvents())).toEqual([
        'message-start',
        'tool-call',
        'tool-result',
        'sources',
        'message-end',
      ]);
      expect(t.committedAnswer()).toMatchObject({ finishReason: 'cancelled', content: '' });
      expect(t.committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2']);
    });

    it('keep the sources its client was shown on the partial answer of a failed turn', async () => {
      t.model = new ScriptedModel([
        searchFor('parental leave'),
        { reply: cites, crash: new Crash(3) },
        { reply: cites, crash: new Crash(3) },
      ]);
      const first = await llmStep(t.services(), round0);
      await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      const round1 = { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true };
      await expect(llmStep(t.services(), round1)).rejects.toThrow('died');
      await expect(llmStep(t.services(), round1)).rejects.toThrow('died');
      const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
      await failTurn(t.services(), { ...ref, userText: input.text, postedAt: input.postedAt, failure });
      expect(t.committedAnswer()).toMatchObject({ finishReason: 'error', content: 'Parents get twenty' });
      expect(t.committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2']);
    });

    it('keep the sources its client was shown on an empty answer of a turn that failed before any text', async () => {
      t.model = new ScriptedModel([searchFor('parental leave'), new Error('the model is down')]);
      const first = await llmStep(t.services(), round0);
      await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      const round1 = { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true };
      await expect(llmStep(t.services(), round1)).rejects.toThrow('the model is down');
      const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
      await failTurn(t.services(), { ...ref, userText: input.text, postedAt: input.postedAt, failure });
      expect(types(t.storedEvents())).toEqual([
        'message-start',
        'tool-call',
        'tool-result',
        'sources',
        'error',
      ]);
      expect(t.committedAnswer()).toMatchObject({ finishReason: 'error', content: '' });
      expect(t.committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2']);
      const announced = t.published.at(-1)?.body as MessageCompleted;
      expect(announced.messages.find((m) => m.role === 'assistant')?.sources).toHaveLength(2);
    });
  });
});
