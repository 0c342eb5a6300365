// Unit tests of conversation search over the in-memory fakes and a fake embedding: hits carry the summary, its
// conversation's title when history has one, its date and scores; the current conversation can be left out.
import { describe, expect, it } from 'vitest';
import { MemoryConversationHeaders } from '../../test/support/in-memory-history.js';
import { MemoryConversationSummaries } from '../../test/support/in-memory-memory.js';
import { summaryDocument } from '../../test/support/memory-fixtures.js';
import { EVERY_HIT } from '../../test/support/search-relevance.js';
import type { Relevance } from '../search/relevance.js';
import type { ConversationSummaryDocument } from './contracts.js';
import { searchConversations } from './search-conversations.js';

const DIMENSIONS = 32;

/** A stand-in embedding: each word counts at a slot picked from its letters, so shared words mean similarity. */
function wordsVector(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const slot = [...word].reduce((sum, char) => sum * 31 + char.charCodeAt(0), 7) % DIMENSIONS;
    vector[slot] = (vector[slot] ?? 0) + 1;
  }
  return vector;
}
const embed = (texts: string[]) => Promise.resolve(texts.map(wordsVector));

function summaryOf(
  userId: string,
  sessionId: string,
  text: string,
  minute: number,
): ConversationSummaryDocument {
  const timestamp = new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();
  return summaryDocument(userId, sessionId, {
    summary: text,
    themes: ['travel'],
    persons: ['Ana'],
    places: ['Lisbon'],
    user_sentiment: 'positive',
    timestamp,
    vector_embedding: wordsVector(text),
    coveredThrough: 3,
    exchanges: 2,
    createdAt: timestamp,
  });
}

async function servicesWith(summaries: ConversationSummaryDocument[], relevance: Relevance = EVERY_HIT) {
  const store = new MemoryConversationSummaries();
  for (const summary of summaries) await store.put(summary, undefined);
  const headers = new MemoryConversationHeaders();
  await headers.touch({
    userId: 'u-1',
    sessionId: 'lisbon',
    createdAt: '2025-01-01T00:00:00.000Z',
    lastActivity: '2025-01-01T00:05:00.000Z',
    messageCount: 4,
    preview: 'preview',
    firstUserText: 'Help me plan Lisbon',
  });
  const embedded: string[][] = [];
  return {
    services: {
      summaries: store,
      headers,
      llm: {
        embed: (texts: string[]) => {
          embedded.push(texts);
          return embed(texts);
        },
      },
      relevance,
    },
    embedded,
  };
}

describe('searchConversations', () => {
  it('embeds the query once and returns hits with title, date and scores, best first', async () => {
    const { services, embedded } = await servicesWith([
      summaryOf('u-1', 'lisbon', 'Planned a weekend in Lisbon with Ana', 5),
      summaryOf('u-1', 'code', 'Fixed a flaky build in the CI pipeline', 6),
      summaryOf('u-2', 'theirs', 'Planned a weekend in Lisbon too', 7),
    ]);
    const hits = await searchConversations(services, 'u-1', 'weekend in Lisbon', 5);
    expect(embedded).toEqual([['weekend in Lisbon']]);
    expect(hits.map((hit) => hit.sessionId)).toEqual(['lisbon', 'code']);
    expect(hits[0]).toEqual({
      sessionId: 'lisbon',
      summary: 'Planned a weekend in Lisbon with Ana',
      themes: ['travel'],
      persons: ['Ana'],
      places: ['Lisbon'],
      user_sentiment: 'positive',
      timestamp: '2025-01-01T00:05:00.000Z',
      createdAt: '2025-01-01T00:05:00.000Z',
      title: 'Help me plan Lisbon',
      date: '2025-01-01T00:05:00.000Z',
      score: expect.any(Number) as number,
      similarity: expect.any(Number) as number,
    });
    expect(hits[1]).not.toHaveProperty('title'); // history has no header for it
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? Infinity);
  });

  it('leaves the excluded conversation out and still fills the list', async () => {
    const { services } = await servicesWith([
      summaryOf('u-1', 'lisbon', 'Planned a weekend in Lisbon with Ana', 5),
      summaryOf('u-1', 'porto', 'Planned a weekend in Porto', 6),
      summaryOf('u-1', 'code', 'Fixed a flaky build', 7),
    ]);
    const hits = await searchConversations(services, 'u-1', 'weekend in Lisbon', 2, {
      excludeSessionId: 'lisbon',
    });
    expect(hits.map((hit) => hit.sessionId)).toEqual(['porto', 'code']);
    expect(await searchConversations(services, 'u-9', 'anything', 3)).toEqual([]);
  });

  it('finds a conversation by a place named only in its places, and nothing for a query that matches nothing', async () => {
    const trip = {
      ...summaryOf('u-1', 'trip', 'Planned a long weekend away with Ana', 5),
      themes: ['travel'],
      persons: ['Ana'],
      places: ['Lisbon'],
    };
    const sums = {
      ...summaryOf('u-1', 'sums', 'Added up two numbers and checked the total', 6),
      themes: ['arithmetic'],
      persons: [],
      places: [],
    };
    const relevance = { minSimilarity: 0.3, textMatchAdmits: true };
    const { services } = await servicesWith([trip, sums], relevance);
    const hits = await searchConversations(services, 'u-1', 'Lisbon', 5);
    expect(hits.map((hit) => hit.sessionId)).toEqual(['trip']);
    expect(await searchConversations(services, 'u-1', 'quantum chromodynamics', 5)).toEqual([]);
    // The similarity threshold alone admits the close one when words do not count.
    const strict = await servicesWith([trip, sums], { minSimilarity: 0.3, textMatchAdmits: false });
    expect(
      (await searchConversations(strict.services, 'u-1', 'added two numbers', 5)).map((hit) => hit.sessionId),
    ).toEqual(['sums']);
  });
});
