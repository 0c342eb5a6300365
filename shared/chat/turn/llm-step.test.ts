// The llmStep activity over in-memory ports: the events it stores (always before they are sent), and that running it
// again, as Durable does after a crash, neither answers twice nor leaves clients with text other than the answer.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  answerReply,
  Crash,
  input,
  ref,
  round0,
  ScriptedModel,
  toolCallReply,
  TurnFixture,
} from '../../../test/support/turn-fixture.js';
import { MemoryEvents } from '../../../test/support/in-memory-ports.js';
import type { LlmReply } from '../../llm/llm-gateway.js';
import { EventSeqTakenError } from '../../streaming/turn-event-store.js';
import { answerText } from '../../streaming/turn-transcript.js';
import { failTurn } from './fail-turn.js';
import { llmStep } from './llm-step.js';
import { runTool } from './run-tool.js';

let t: TurnFixture;

beforeEach(() => {
  t = new TurnFixture();
});

describe('llmStep', () => {
  it('store one gap-free event sequence before sending it, and commit exactly what the client assembled', async () => {
    await t.runWholeTurn();
    const stream = t.storedEvents();
    expect(stream.map((e) => e.seq)).toEqual(stream.map((_, i) => i + 1));
    expect(stream.map((e) => e.type)).toEqual([
      'message-start',
      'tool-call',
      'tool-result',
      'reasoning-delta',
      'reasoning-end',
      'content',
      'content',
      'content',
      'content',
      'message-end',
    ]);
    // MemoryEvents refuses a send of an event it has not stored; everything stored was sent, in order.
    expect(t.events.sent).toEqual(stream);
    expect(stream.at(-1)).toMatchObject({
      type: 'message-end',
      finishReason: 'stop',
      usage: answerReply.usage,
    });
    expect(t.committedAnswer()?.content).toBe(answerText(stream));
    expect(t.committedAnswer()?.toolCalls).toEqual([
      {
        id: 'call_1',
        name: 'add_numbers',
        arguments: '{"a":2,"b":3}',
        result: '{"sum":5}',
        isError: false,
        round: 0,
      },
    ]);
    expect(t.memory.messages.map((m) => m.messageId)).toEqual([
      `${input.chatMessageId}_user`,
      `${input.chatMessageId}_assistant`,
    ]);
    expect(t.published).toHaveLength(1);
    expect(t.published[0]).toMatchObject({
      sessionId: input.sessionId,
      body: { outcome: 'completed', ...ref },
    });
    // The second call saw the tool call and its result, after the same prompt as the first.
    expect(t.model.requests[1]?.messages.slice(0, 2)).toEqual(t.model.requests[0]?.messages);
    expect(t.model.requests[1]?.messages.slice(-2)).toEqual([
      { role: 'assistant', content: '', tool_calls: toolCallReply.toolCalls },
      { role: 'tool', tool_call_id: 'call_1', content: '{"sum":5}' },
    ]);
  });

  it('answer a turn without tools in one step that keeps no turn record', async () => {
    t.model = new ScriptedModel([answerReply]);
    const coalescing = { flushIntervalMs: 60_000, flushMaxChars: 256 };
    const step = await llmStep(
      { ...t.services(), settings: { ...t.services().settings, coalescing } },
      round0,
    );
    expect(step).toMatchObject({ outcome: 'answered', finishReason: 'stop' });
    expect(t.turns.turns.size).toBe(0);
    // The first text goes out at once; the rest is held and travels with message-end, in one stored batch.
    expect(t.storedEvents().map((e) => e.type)).toEqual([
      'message-start',
      'reasoning-delta',
      'reasoning-end',
      'content',
      'content',
      'message-end',
    ]);
    expect(t.events.batches.get(step.nextSeq - 2)?.map((e) => e.type)).toEqual(['content', 'message-end']);
    expect(answerText(t.storedEvents())).toBe(t.committedAnswer()?.content);
  });

  it('run again after the turn ended without calling the model, running the tool or adding an event', async () => {
    await t.runWholeTurn();
    const stored = new Map(t.events.stored);
    t.model = new ScriptedModel([]);
    expect(await llmStep(t.services(), round0)).toMatchObject({ outcome: 'answered' });
    await runTool(t.services(), { ...ref, round: 0, index: 0, seq: 3 });
    const round1 = { ...ref, round: 1, firstSeq: 4, toolsAllowed: true };
    expect(await llmStep(t.services(), round1)).toMatchObject({ outcome: 'answered' });
    expect(t.model.requests).toHaveLength(0);
    expect(t.memory.messages).toHaveLength(2);
    expect(t.events.stored).toEqual(stored);
    // Announced again under the same message id: Service Bus drops the duplicate.
    expect(new Set(t.published.map((m) => m.messageId)).size).toBe(1);
  });

  it('continue a round that died midway: the streamed part is discarded and the answer streamed whole', async () => {
    t.model = new ScriptedModel([{ reply: answerReply, crash: new Crash(3) }, answerReply]);
    await expect(llmStep(t.services(), round0)).rejects.toThrow('died');
    const partial = t.storedEvents();
    expect(partial.map((e) => e.type)).toEqual([
      'message-start',
      'reasoning-delta',
      'reasoning-end',
      'content',
      'content',
    ]);
    // What a live client had by then.
    const live = [...t.events.sent];

    const step = await llmStep(t.services(), round0);
    expect(step.outcome).toBe('answered');
    const all = t.storedEvents();
    expect(all.slice(0, partial.length)).toEqual(partial); // no seq ever gets other content
    expect(all[partial.length]).toMatchObject({ type: 'discard', fromSeq: 2, toSeq: 5 });
    expect(answerText(all)).toBe('The sum is 5.');
    expect(t.committedAnswer()?.content).toBe('The sum is 5.');
    // The live client keeps what it had (what the died attempt stored is sent again, each seq the same), and ends
    // up with the committed answer too.
    expect(t.events.sent.slice(0, live.length)).toEqual(live);
    expect(answerText(t.events.sent)).toBe('The sum is 5.');
    expect(t.model.requests).toHaveLength(2);
  });

  it('send what a died attempt stored but never sent, before anything new: a live client sees no gap', async () => {
    t.model = new ScriptedModel([answerReply]);
    // The process dies right after its message-start is stored, before it is sent.
    const append = t.events.append.bind(t.events);
    t.events.append = async (batch) => {
      await append(batch);
      t.events.append = append;
      throw new Error('the process died');
    };
    await expect(llmStep(t.services(), round0)).rejects.toThrow('died');
    expect(t.events.sent).toEqual([]);

    expect((await llmStep(t.services(), round0)).outcome).toBe('answered');
    const stored = t.storedEvents();
    expect(t.events.sent).toEqual(stored);
    expect(stored[0]).toMatchObject({ seq: 1, type: 'message-start' });
  });

  it('finish the stream of a turn committed just before a crash, from what its clients already have', async () => {
    t.model = new ScriptedModel([answerReply]);
    await llmStep(t.services(), round0);
    const all = t.storedEvents();
    // As if the process died after the commit, before its last batch ([content, message-end]) was stored.
    const lastBatch = all.length - 2;
    for (const event of all.slice(lastBatch)) t.events.stored.delete(event.seq);
    t.events.batches.delete(all[lastBatch]!.seq);

    t.model = new ScriptedModel([]);
    const step = await llmStep(t.services(), round0);
    expect(step.outcome).toBe('answered');
    const finished = t.storedEvents();
    expect(finished.map((e) => e.type).slice(-2)).toEqual(['content', 'message-end']);
    expect(answerText(finished)).toBe(t.committedAnswer()?.content);
    expect(finished.at(-1)).toMatchObject({ usage: answerReply.usage });
    expect(t.model.requests).toHaveLength(0);
  });

  it('stop when another attempt of the step is writing the same seqs', async () => {
    t.model = new ScriptedModel([answerReply]);
    await t.events.append([
      { ...ref, seq: 1, type: 'message-start', userMessageId: 'x_user', assistantMessageId: 'x_assistant' },
    ]);
    await expect(llmStep(t.services(), round0)).rejects.toMatchObject({
      cause: expect.any(EventSeqTakenError),
    });
  });

  it('ask for a text answer, and run no tools, once the tool rounds are used up', async () => {
    t.model = new ScriptedModel([toolCallReply]);
    const step = await llmStep(t.services(), { ...round0, toolsAllowed: false });
    expect(t.model.requests[0]?.toolChoice).toBe('none');
    expect(step).toMatchObject({ outcome: 'answered', toolCalls: [], finishReason: 'tool_rounds_exhausted' });
    expect(t.storedEvents().some((e) => e.type === 'tool-call')).toBe(false);
  });

  it('run no tool call of a reply cut at the token limit, and commit its text as the answer', async () => {
    // Cut off mid-call: the arguments may be broken JSON, and the answer is all the model will give.
    const cut: LlmReply = {
      content: 'Let me add them.',
      reasoning: '',
      toolCalls: [{ id: 'call_1', name: 'add_numbers', arguments: '{"a":2,"b' }],
      finishReason: 'length',
    };
    t.model = new ScriptedModel([cut]);
    const step = await llmStep(t.services(), round0);
    expect(step).toMatchObject({ outcome: 'answered', toolCalls: [], finishReason: 'length' });
    expect(t.turns.turns.size).toBe(0);
    expect(t.storedEvents().some((e) => e.type === 'tool-call')).toBe(false);
    expect(t.storedEvents().at(-1)).toMatchObject({ type: 'message-end', finishReason: 'length' });
    expect(t.committedAnswer()).toMatchObject({ content: 'Let me add them.', finishReason: 'length' });
    expect(t.committedAnswer()?.toolCalls).toBeUndefined();
  });

  it('keep use_memory false in the turn record and on the announcement of a completed or failed turn', async () => {
    const off = { useMemory: false } as const;
    const first = await llmStep(t.services(), { ...round0, ...off });
    expect(t.turns.turns.get(input.chatMessageId)?.useMemory).toBe(false);
    await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq, ...off });
    await llmStep(t.services(), {
      ...ref,
      round: 1,
      firstSeq: first.nextSeq + 1,
      toolsAllowed: true,
      ...off,
    });
    expect(t.published[0]?.body).toMatchObject({ outcome: 'completed', useMemory: false });

    t.published = [];
    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    const other = { ...ref, chatMessageId: 'b0e8e7a2-7f4f-4b0a-9d55-4b1b6a0e2f10' };
    t.events = new MemoryEvents();
    await failTurn(t.services(), { ...other, userText: 'hi', postedAt: input.postedAt, failure, ...off });
    expect(t.published[0]?.body).toMatchObject({ outcome: 'failed', useMemory: false });
  });

  it('offer the conversation search only when the turn may use memory, and refuse a call to it otherwise', async () => {
    const searchCall: LlmReply = {
      ...toolCallReply,
      toolCalls: [
        { id: 'call_s', name: 'search_conversation_history', arguments: '{"search_query":"boat"}' },
      ],
    };
    t.model = new ScriptedModel([searchCall, answerReply]);
    const first = await llmStep(t.services(), round0);
    expect(t.model.requests[0]?.tools?.map((tool) => tool.name)).toContain('search_conversation_history');
    await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
    expect(t.searches).toEqual([
      {
        userId: input.userId,
        query: 'boat',
        limit: 5,
        // A conversation without an assistant or project searches the user's shared memory only.
        options: { excludeSessionId: input.sessionId, scopes: ['user'] },
      },
    ]);

    // A use_memory false turn: not offered; a model that calls it anyway gets an error result.
    const other = { ...ref, chatMessageId: 'b0e8e7a2-7f4f-4b0a-9d55-4b1b6a0e2f10' };
    t.events = new MemoryEvents();
    t.model = new ScriptedModel([searchCall, answerReply]);
    const off = { useMemory: false } as const;
    const step = await llmStep(t.services(), { ...round0, ...other, ...off });
    expect(t.model.requests[0]?.tools?.map((tool) => tool.name)).not.toContain('search_conversation_history');
    expect(await runTool(t.services(), { ...other, round: 0, index: 0, seq: step.nextSeq, ...off })).toEqual({
      isError: true,
    });
    expect(t.searches).toHaveLength(1);
    expect(t.storedEvents().find((e) => e.type === 'tool-result')).toMatchObject({
      isError: true,
      result: expect.stringContaining('use_memory false') as unknown,
    });
  });

  it('leave useMemory off the announcement of a turn that may use memory (absent means true)', async () => {
    await t.runWholeTurn();
    expect(t.turns.turns.get(input.chatMessageId)).not.toHaveProperty('useMemory');
    expect(t.published[0]?.body).not.toHaveProperty('useMemory');
  });
});
