// The history worker's use-case over the in-memory history ports and a recording model: a turn is stored once
// however often its event is delivered, failed turns keep their failure and its opening turn its system prompt,
// and a conversation deleted before or while it runs keeps nothing.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  at,
  chatId,
  digestOf,
  goodAnswer,
  headerOf,
  sessionId,
  storedOf,
  turn,
  useHistoryWorker,
  userId,
  failNextRecord,
} from '../../test/support/history-worker.js';
import { persistTurn } from './persist-turn.js';
import { toStoredMessage } from './contracts.js';

const world = useHistoryWorker();
let { headers, messages, memory, model, sessions, services, log } = world;
beforeEach(() => void ({ headers, messages, memory, model, sessions, services, log } = world));
const stored = () => storedOf(world);
const header = () => headerOf(world);
const digest = () => digestOf(world);
/** A delete's first steps: the session's mark, then the header's, before it purges anything. */
const deleteBegins = async () => {
  await sessions.markDeleting(userId, sessionId);
  await headers.markDeleting(userId, sessionId);
};

describe('persistTurn', () => {
  it('stores each message as an item with its tool calls, the exchange entry, and records the turn', async () => {
    expect(await persistTurn(services, turn(0), log)).toBe('persisted');

    expect(stored()).toEqual([
      expect.objectContaining({
        id: `${chatId(0)}_user`,
        kind: 'message',
        userId,
        sessionId,
        ordinal: 0,
        content: 'question 0',
      }),
      expect.objectContaining({
        id: `${chatId(0)}_assistant`,
        kind: 'message',
        ordinal: 1,
        toolCalls: [expect.objectContaining({ name: 'add_numbers', result: '1' })],
      }),
    ]);
    expect(await memory.getExchange(userId, sessionId, chatId(0))).toEqual({
      exchangeId: chatId(0),
      ordinal: 0,
      line: 'line: question 0',
      tags: ['topic'],
      at,
    });
    // 'question 0' is 10 bytes → 4 tokens, 'answer 0' 8 → 3; each with 4 of overhead.
    expect(await header()).toMatchObject({
      persistedCount: 2,
      persistedAt: at,
      tokens: { prompt: 10, completion: 5, total: 15 },
      textTokens: 15,
    });
    // Nothing to fold yet: no digest.
    expect(await digest()).toBeUndefined();
  });

  it('stores items once and adds tokens once, however often the event is delivered', async () => {
    for (let i = 0; i < 4; i++) await persistTurn(services, turn(0), log);
    await persistTurn(services, turn(1), log);
    for (let i = 0; i < 3; i++) {
      await persistTurn(services, turn(1), log);
      await persistTurn(services, turn(0), log);
    }

    expect(stored()).toHaveLength(4);
    expect(await header()).toMatchObject({
      persistedCount: 4,
      tokens: { prompt: 20, completion: 10, total: 30 },
      textTokens: 30,
    });
    // A redelivery after the turn was recorded costs two point reads: no model call.
    expect(model.requests).toHaveLength(2);
  });

  it('stores an older turn replayed after later ones (from the dead-letter queue), without its tokens', async () => {
    await persistTurn(services, turn(1), log);
    expect(await persistTurn(services, turn(0), log)).toBe('persisted');
    expect(
      stored()
        .map((m) => m.ordinal)
        .sort(),
    ).toEqual([0, 1, 2, 3]);
    expect(await header()).toMatchObject({ persistedCount: 4, tokens: { total: 15 }, textTokens: 15 });
    expect(log.lines.join('\n')).toMatch(/arrived after later turns/);
  });

  it('redone after failing before the turn was recorded, adds nothing twice', async () => {
    failNextRecord(headers);

    await expect(persistTurn(services, turn(0), log)).rejects.toThrow('Cosmos DB unavailable');
    expect(await persistTurn(services, turn(0), log)).toBe('persisted');

    expect(stored()).toHaveLength(2);
    expect(await header()).toMatchObject({ tokens: { total: 15 }, textTokens: 15 });
  });

  it('stores a failed turn with its failure, without an exchange entry', async () => {
    await persistTurn(services, turn(0, { outcome: 'failed' }), log);

    expect(stored()).toEqual([
      expect.objectContaining({
        ordinal: 0,
        failure: { code: 'model_unavailable', message: 'The model did not answer.' },
      }),
    ]);
    expect(memory.exchanges.size).toBe(0);
    expect(model.requests).toHaveLength(0);
    expect(await header()).toMatchObject({ persistedCount: 1, tokens: { total: 0 }, textTokens: 8 });
  });

  it("keeps the answer's reasoning and the turn's use_memory false mark on its items", async () => {
    const event = turn(0);
    const reasoning = { text: 'Add one and nothing.', durationMs: 2_400 };
    event.useMemory = false;
    event.messages = event.messages.map((message) => ({
      ...message,
      useMemory: false as const,
      ...(message.role === 'assistant' ? { reasoning } : {}),
    }));
    await persistTurn(services, event, log);

    expect(stored()).toEqual([
      expect.objectContaining({ role: 'user', useMemory: false }),
      expect.objectContaining({ role: 'assistant', useMemory: false, reasoning }),
    ]);
  });

  it("keeps the opening turn's system prompt beside the messages, once, and never as a numbered message", async () => {
    const prompt = {
      content: 'You are helpful.\n\n## Their interests\n- Sailing.',
      personalised: true,
      createdAt: at,
    };
    for (let i = 0; i < 3; i++) await persistTurn(services, { ...turn(0), systemPrompt: prompt }, log);
    // A later announcement with another prompt (there is none in practice) never replaces the first.
    await persistTurn(services, { ...turn(1), systemPrompt: { ...prompt, content: 'other' } }, log);
    expect(await messages.getSystemPrompt(userId, sessionId)).toEqual(prompt);
    expect(stored().map((m) => m.ordinal)).toEqual([0, 1, 2, 3]);
    expect(await header()).toMatchObject({ persistedCount: 4 });
    // Deleting the conversation's items removes it with them.
    await messages.deleteAll(userId, sessionId);
    expect(await messages.getSystemPrompt(userId, sessionId)).toBeUndefined();
  });

  it('writes nothing for a deleted conversation', async () => {
    await headers.delete(userId, sessionId);
    const prompt = { content: 'You are helpful.', personalised: false, createdAt: at };
    expect(await persistTurn(services, { ...turn(0), systemPrompt: prompt }, log)).toBe(
      'conversation-deleted',
    );
    expect(messages.items.size + messages.systemPrompts.size).toBe(0);
    expect(memory.exchanges.size + memory.digests.size).toBe(0);
    expect(model.requests).toHaveLength(0);
  });

  it('takes back what a delivery that died after the purge wrote, once the delete is done', async () => {
    await sessions.create(userId, sessionId);
    // The first delivery wrote the turn's items after the delete's purge, then died before its record; the delete
    // then removed the header and finished.
    await messages.put(turn(0).messages.map((message) => toStoredMessage(userId, sessionId, message)));
    await deleteBegins();
    await headers.delete(userId, sessionId);
    expect(stored()).toHaveLength(2);
    expect(await persistTurn(services, turn(0), log)).toBe('conversation-deleted');
    expect(stored()).toEqual([]);
  });

  it('removes what it wrote when the conversation is deleted while it runs', async () => {
    model.answer = (name, input) => {
      void headers.delete(userId, sessionId);
      return goodAnswer(name, input);
    };
    expect(await persistTurn(services, turn(0), log)).toBe('conversation-deleted');
    expect(stored()).toEqual([]);
    expect(memory.exchanges.size + memory.digests.size).toBe(0);
  });

  it('keeps nothing of a conversation being deleted whose header is still there: its mark tells', async () => {
    await sessions.create(userId, sessionId);
    await deleteBegins();
    expect(await persistTurn(services, turn(0), log)).toBe('conversation-deleted');
    expect(stored()).toEqual([]);
    expect(memory.exchanges.size + memory.digests.size).toBe(0);
    expect(await headers.get(userId, sessionId)).toBeUndefined();
  });

  it("reads the conversation's tombstone only when the header refuses its record, and after its writes", async () => {
    await sessions.create(userId, sessionId);
    const reads: boolean[] = [];
    const counted = {
      ...services,
      sessions: {
        isDeleted: async (user: string, session: string) => {
          const deleted = await sessions.isDeleted(user, session);
          // Whether the turn's items were written by the time it was read.
          reads.push(stored().length > 0);
          return deleted;
        },
      },
    };
    expect(await persistTurn(counted, turn(0), log)).toBe('persisted');
    expect(reads).toEqual([]);
    // Its items lost after it was recorded: stored again, and the header, already past it, refuses the record.
    await messages.deleteAll(userId, sessionId);
    expect(await persistTurn(counted, turn(0), log)).toBe('persisted');
    expect(reads).toEqual([true]);
  });

  it('takes back what it wrote, header included, when the delete marks the conversation while it runs', async () => {
    await sessions.create(userId, sessionId);
    model.answer = (name, input) => {
      // Marked only: the delete has not removed the header yet, and a writer's header is what brings a list back.
      void deleteBegins();
      return goodAnswer(name, input);
    };
    expect(await persistTurn(services, turn(0), log)).toBe('conversation-deleted');
    expect(stored()).toEqual([]);
    expect(memory.exchanges.size + memory.digests.size).toBe(0);
    expect(await headers.get(userId, sessionId)).toBeUndefined();
  });
});
