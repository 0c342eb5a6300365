// The history worker restores what a cut event left out (tool results, sources) from working memory, including
// from a branch the user has since left.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  sessionId,
  startConversation,
  storedOf,
  turn,
  useHistoryWorker,
  userId,
} from '../../test/support/history-worker.js';
import { persistTurn } from './persist-turn.js';

const world = useHistoryWorker();
let { headers, messages, services, log } = world;
beforeEach(() => void ({ headers, messages, services, log } = world));
const stored = () => storedOf(world);

describe('persistTurn', () => {
  it('takes tool results whole from working memory when the event carries them cut', async () => {
    const event = turn(0);
    const whole = structuredClone(event.messages);
    whole[1]!.toolCalls![0]!.result = 'r'.repeat(5_000);
    event.messages[1]!.toolCalls![0]!.result = 'r'.repeat(1_000);
    world.hot = whole;
    await persistTurn(services, { ...event, complete: false }, log);
    expect(stored()[1]?.toolCalls?.[0]?.result).toHaveLength(5_000);

    world.hot = [];
    await headers.delete(userId, sessionId);
    await startConversation(world, 'again');
    messages.items.clear();
    await persistTurn(services, { ...event, complete: false }, log);
    expect(stored()[1]?.toolCalls?.[0]?.result).toHaveLength(1_000);
    expect(log.lines.join('\n')).toMatch(/tool results cut/);
  });

  it('takes the sources whole from working memory when the event carries them cut or left out', async () => {
    const source = {
      chunkId: 'doc:1',
      documentId: 'a'.repeat(32),
      title: 'Employee Handbook',
      pages: [4],
      citation: 'Employee Handbook, p. 4',
      excerpt: 'Parents get twenty weeks of paid leave.',
      score: 0.03,
    };
    const event = turn(0);
    const whole = structuredClone(event.messages);
    whole[1]!.sources = [source];
    world.hot = whole;
    event.messages[1]!.sources = [{ ...source, excerpt: '' }];
    await persistTurn(services, { ...event, complete: false }, log);
    expect(stored()[1]?.sources).toEqual([source]);

    messages.items.clear();
    await headers.delete(userId, sessionId);
    await startConversation(world, 'again');
    delete event.messages[1]!.sources;
    await persistTurn(services, { ...event, complete: false }, log);
    expect(stored()[1]?.sources).toEqual([source]);
  });

  it('takes them whole from a branch the user has since left, beside the window', async () => {
    const event = turn(0);
    const whole = structuredClone(event.messages);
    whole[1]!.toolCalls![0]!.result = 'r'.repeat(5_000);
    event.messages[1]!.toolCalls![0]!.result = 'r'.repeat(1_000);
    world.hotOffPath = whole;
    await persistTurn(services, { ...event, complete: false }, log);
    expect(stored()[1]?.toolCalls?.[0]?.result).toHaveLength(5_000);
  });
});
