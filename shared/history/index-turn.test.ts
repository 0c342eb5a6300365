// The history worker's index step: the model's title comes with the second exchange (or a first long enough), the
// user's title always wins over it, and a model that answers badly never stops a turn from being persisted.
import { beforeEach, describe, expect, it } from 'vitest';
import { EXCHANGE_INDEX_FORMAT } from './history-llm.js';
import {
  chatId,
  goodAnswer,
  headerOf,
  sessionId,
  storedOf,
  turn,
  useHistoryWorker,
  userId,
} from '../../test/support/history-worker.js';
import { persistTurn } from './persist-turn.js';

const world = useHistoryWorker();
let { headers, memory, model, services, log } = world;
beforeEach(() => void ({ headers, memory, model, services, log } = world));
const stored = () => storedOf(world);
const header = () => headerOf(world);

describe('persistTurn', () => {
  describe('titles', () => {
    it('asks for a title with the second exchange, from how the conversation began', async () => {
      await persistTurn(services, turn(0), log);
      expect((await header()).titleSource).toBe('first-message');
      await persistTurn(services, turn(1), log);

      expect(model.inputs(EXCHANGE_INDEX_FORMAT)[1]).toEqual({
        firstQuestion: 'What is the capital of France?',
        question: 'question 1',
        answer: 'answer 1',
      });
      expect(await header()).toMatchObject({ title: 'Model title', titleSource: 'model' });
      expect((await memory.getExchange(userId, sessionId, chatId(1)))?.tags).toEqual(['topic']);

      await persistTurn(services, turn(2), log);
      expect(model.inputs(EXCHANGE_INDEX_FORMAT)[2]).not.toHaveProperty('firstQuestion');
    });

    it('asks at the first exchange when it has enough text', async () => {
      await persistTurn(services, turn(0, { answer: 'x'.repeat(200) }), log);
      expect(await header()).toMatchObject({ title: 'Model title', titleSource: 'model' });
    });

    it("never puts the model's title over the user's", async () => {
      await headers.setTitle(userId, sessionId, 'My trip', 'user');
      await persistTurn(services, turn(0, { answer: 'x'.repeat(300) }), log);
      await persistTurn(services, turn(1), log);
      expect(model.inputs(EXCHANGE_INDEX_FORMAT).some((input) => 'firstQuestion' in input)).toBe(false);
      expect(await header()).toMatchObject({ title: 'My trip', titleSource: 'user' });
    });

    it("keeps the user's title set while the model was titling", async () => {
      model.answer = (name, input) => {
        void headers.setTitle(userId, sessionId, 'Renamed meanwhile', 'user');
        return goodAnswer(name, input);
      };
      await persistTurn(services, turn(0, { answer: 'x'.repeat(300) }), log);
      expect(await header()).toMatchObject({ title: 'Renamed meanwhile', titleSource: 'user' });
    });
  });

  it('persists the turn when the model answers out of schema: the question stands in, the title stays', async () => {
    model.answer = () => ({ line: '', tags: [], title: 'x'.repeat(500) });
    expect(
      await persistTurn(services, turn(0, { question: 'Where  is\nRome?', answer: 'y'.repeat(300) }), log),
    ).toBe('persisted');

    expect(stored()).toHaveLength(2);
    expect(await memory.getExchange(userId, sessionId, chatId(0))).toMatchObject({
      line: 'Q: Where is Rome?',
      tags: [],
    });
    expect(await header()).toMatchObject({
      title: 'What is the capital of France?',
      titleSource: 'first-message',
      persistedCount: 2,
    });
    expect(log.lines.join('\n')).toMatch(/no index line from the model/);
  });
});
