// The tool search_conversation_history over a recording search: what it asks for (the caller's user, the current
// conversation left out, the default limit), what the model reads back (each conversation to cite, with its
// summary, themes, sentiment and relevance), and the arguments it refuses.
import { beforeEach, describe, expect, it } from 'vitest';
import type { ConversationSearchHit } from '../memory/contracts.js';
import { conversationSearchTool } from './conversation-search.js';
import { ToolRegistry, type ToolContext } from './tool-registry.js';

const context: ToolContext = { userId: 'user_001', sessionId: 'current-session', chatMessageId: 'chat-1' };

const boat: ConversationSearchHit = {
  sessionId: 'earlier-session',
  title: 'Boat and tides',
  date: '2026-11-01T09:00:00.000Z',
  summary: 'The user named their boat Aurora, moored in Porto.',
  themes: ['sailing', 'mooring'],
  persons: [],
  places: ['Porto'],
  user_sentiment: 'positive',
  timestamp: '2026-11-01T09:00:00.000Z',
  createdAt: '2026-10-30T08:00:00.000Z',
  score: 0.0327868852459,
  similarity: 0.81,
};

let asked: { userId: string; query: string; limit: number; options: { excludeSessionId?: string } }[];
let answer: ConversationSearchHit[];
let registry: ToolRegistry;

beforeEach(() => {
  asked = [];
  const { title: _title, ...untitled } = boat;
  answer = [boat, { ...untitled, sessionId: 'untitled', score: 0.016 }];
  registry = new ToolRegistry([
    conversationSearchTool({
      searchConversations: (userId, query, limit, options) => {
        asked.push({ userId, query, limit, options });
        return Promise.resolve(answer);
      },
    }),
  ]);
});

async function search(args: unknown, at: ToolContext = context) {
  const outcome = await registry.execute(
    { id: 'call-1', name: 'search_conversation_history', arguments: JSON.stringify(args) },
    at,
  );
  return { isError: outcome.isError, value: JSON.parse(outcome.result) as Record<string, unknown> };
}

describe('search_conversation_history', () => {
  it("searches the caller's other conversations and names each one found, to be cited", async () => {
    const { isError, value } = await search({ search_query: 'my boat', limit: 3 });
    expect(isError).toBe(false);
    expect(asked).toEqual([
      { userId: 'user_001', query: 'my boat', limit: 3, options: { excludeSessionId: 'current-session' } },
    ]);
    expect(value).toEqual({
      search_query: 'my boat',
      conversations: [
        {
          sessionId: 'earlier-session',
          title: 'Boat and tides',
          date: '2026-11-01T09:00:00.000Z',
          summary: 'The user named their boat Aurora, moored in Porto.',
          themes: ['sailing', 'mooring'],
          persons: [],
          places: ['Porto'],
          user_sentiment: 'positive',
          relevance_score: 0.03279,
        },
        expect.not.objectContaining({ title: expect.anything() as unknown }) as unknown,
      ],
    });
  });

  it('asks for 5 when the model gives no limit, and says so when nothing matches', async () => {
    answer = [];
    const { value } = await search({ search_query: 'vacation planning' });
    expect(asked[0]?.limit).toBe(5);
    expect(value).toEqual({
      search_query: 'vacation planning',
      conversations: [],
      note: 'No earlier conversation of this user matches the search.',
    });
  });

  it('refuses an empty query or a limit out of range, naming the argument', async () => {
    for (const args of [
      { search_query: '  ' },
      { search_query: 'x', limit: 0 },
      { search_query: 'x', limit: 21 },
      {},
    ]) {
      const { isError, value } = await search(args);
      expect(isError).toBe(true);
      expect(String(value['error'])).toMatch(
        /^Invalid arguments for search_conversation_history: (search_query|limit)/,
      );
    }
    expect(asked).toEqual([]);
  });

  it('is described with when to use it, as a memory tool a use_memory false turn is not offered', async () => {
    const [spec] = registry.specs();
    expect(spec?.description).toMatch(/earlier conversations \(not this one\)/);
    expect(spec?.description).toMatch(/"last time"/);
    expect(spec?.parameters).toMatchObject({ required: ['search_query'] });
    expect(registry.specs({ useMemory: false })).toEqual([]);
    const { isError } = await search({ search_query: 'my boat' }, { ...context, useMemory: false });
    expect(isError).toBe(true);
    expect(asked).toEqual([]);
  });
});
