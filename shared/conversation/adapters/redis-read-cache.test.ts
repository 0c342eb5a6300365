// The Redis hot store's read cache stays within its bounds per session and in all, letting the least recently used
// entries go first, and keeps its counts true through replaces, deletes and whole sessions going.
import { describe, expect, it } from 'vitest';
import { RedisReadCache } from './redis-read-cache.js';

const entry = (version: string, json = '{}') => ({ version, json });
const keys = (cache: RedisReadCache, sessionId: string, all: readonly string[]) =>
  all.filter((key) => cache.get(sessionId, key) !== undefined);

describe('RedisReadCache', () => {
  it('keeps at most entriesPerSession of a session, dropping its least recently used', () => {
    const cache = new RedisReadCache({ entriesPerSession: 3, entries: 100, chars: 1_000 });
    for (const key of ['a', 'b', 'c']) cache.set('s1', key, entry(`v-${key}`));
    expect(cache.get('s1', 'a')).toEqual(entry('v-a')); // a is now the most recent: b goes next
    cache.set('s1', 'd', entry('v-d'));
    expect(cache.get('s1', 'b')).toBeUndefined();
    expect(keys(cache, 's1', ['a', 'c', 'd'])).toEqual(['a', 'c', 'd']);
    expect(cache.size()).toEqual({ sessions: 1, entries: 3, chars: 6 });
  });

  it('keeps at most `entries` in all, taking from the least recently used session first', () => {
    const cache = new RedisReadCache({ entriesPerSession: 10, entries: 4, chars: 1_000 });
    cache.set('old', 'x', entry('1'));
    cache.set('old', 'y', entry('2'));
    cache.set('busy', 'x', entry('3'));
    cache.set('busy', 'y', entry('4'));
    cache.get('old', 'y'); // old is used again: busy is now the least recent session
    cache.set('new', 'x', entry('5'));
    expect(cache.get('busy', 'x')).toBeUndefined();
    expect(cache.get('busy', 'y')).toEqual(entry('4'));
    expect(cache.size().entries).toBe(4);
    // Many sessions of one entry each: the cache never holds more than its bound.
    for (let n = 0; n < 50; n += 1) cache.set(`s${n}`, 'k', entry(String(n)));
    expect(cache.size()).toEqual({ sessions: 4, entries: 4, chars: 8 });
    expect(cache.get('s49', 'k')).toEqual(entry('49'));
    expect(cache.get('s45', 'k')).toBeUndefined();
  });

  it('keeps at most `chars` of JSON, and never holds an entry larger than that alone', () => {
    const cache = new RedisReadCache({ entriesPerSession: 10, entries: 100, chars: 10 });
    cache.set('s', 'a', entry('1', '"aaaa"')); // 6 characters
    cache.set('s', 'b', entry('2', '"bb"')); // 4: exactly the bound
    expect(cache.size().chars).toBe(10);
    cache.set('s', 'c', entry('3', '"c"')); // 3 more: a (the oldest) goes
    expect(cache.get('s', 'a')).toBeUndefined();
    expect(cache.size()).toEqual({ sessions: 1, entries: 2, chars: 7 });
    cache.set('s', 'huge', entry('4', `"${'x'.repeat(20)}"`));
    expect(cache.get('s', 'huge')).toBeUndefined();
    expect(cache.size()).toEqual({ sessions: 1, entries: 2, chars: 7 });
  });

  it('replaces an entry in place of counting it twice, and forgets deleted entries and sessions', () => {
    const cache = new RedisReadCache({ entriesPerSession: 2, entries: 10, chars: 100 });
    cache.set('s', 'a', entry('1', '"one"'));
    cache.set('s', 'a', entry('2', '"three"'));
    expect(cache.get('s', 'a')).toEqual(entry('2', '"three"'));
    expect(cache.size()).toEqual({ sessions: 1, entries: 1, chars: 7 });
    cache.set('s', 'b', entry('3'));
    cache.delete('s', 'a');
    cache.delete('s', 'missing');
    expect(cache.size()).toEqual({ sessions: 1, entries: 1, chars: 2 });
    cache.set('t', 'a', entry('4'));
    cache.deleteSession('s');
    expect(cache.get('s', 'b')).toBeUndefined();
    expect(cache.size()).toEqual({ sessions: 1, entries: 1, chars: 2 });
  });

  it('refuses bounds that could hold nothing', () => {
    expect(() => new RedisReadCache({ entriesPerSession: 0, entries: 1, chars: 1 })).toThrow(
      /entriesPerSession/,
    );
    expect(() => new RedisReadCache({ entriesPerSession: 1, entries: 1.5, chars: 1 })).toThrow(/entries/);
  });
});
