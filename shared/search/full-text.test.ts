// The in-process full-text matching: words, stop words, and the suffix-stripping stemmer's promises (a word meets
// its plural and its -ed / -ing forms; a stem is a prefix of its word).
import { describe, expect, it } from 'vitest';
import { fullTextMatches, queryStems, queryWords, stem, words } from './full-text.js';

describe('words', () => {
  it('splits on anything but letters and digits, lower-cased, in any script', () => {
    expect(words('Deploy the API-gateway, v2.1! Café über')).toEqual([
      'deploy',
      'the',
      'api',
      'gateway',
      'v2',
      '1',
      'café',
      'über',
    ]);
  });

  it('leaves stop words and repeats out of a query', () => {
    expect(queryWords('The cost of the cost')).toEqual(['cost']);
  });
});

describe('stem', () => {
  it.each([
    ['studies', 'study'],
    ['cities', 'city'],
    ['boxes', 'box'],
    ['watches', 'watch'],
    ['classes', 'class'],
    ['databases', 'database'],
    ['created', 'create'],
    ['creating', 'creates'],
    ['running', 'run'],
    ['stopped', 'stop'],
    ['deployed', 'deploying'],
    ['families', 'family'],
    ['needed', 'needs'],
  ])('%s and %s share a stem', (a, b) => {
    expect(stem(a)).toBe(stem(b));
  });

  it.each(['this', 'status', 'analysis', 'string', 'use', 'run', 'v2'])('keeps %s whole', (word) => {
    expect(stem(word)).toBe(word);
  });

  it('answers a prefix of the word', () => {
    for (const word of ['studies', 'creating', 'stopped', 'databases', 'families', 'quickly', 'watches'])
      expect(word.startsWith(stem(word))).toBe(true);
  });
});

describe('fullTextMatches', () => {
  it('needs every word of the query, by stem, in any order and case', () => {
    expect(fullTextMatches('Deploying the Functions app to Azure', 'azure deployment')).toBe(false);
    expect(fullTextMatches('Deploying the Functions app to Azure', 'AZURE deployed function')).toBe(true);
    expect(fullTextMatches('Paris trip', 'trips to Paris')).toBe(true);
    expect(fullTextMatches('Paris trip', 'Paris hotel')).toBe(false);
  });

  it('finds nothing for a query with no word that counts', () => {
    expect(queryStems('the, of ... and')).toEqual([]);
    expect(fullTextMatches('the end of the world', 'the of')).toBe(false);
    expect(fullTextMatches('anything', '')).toBe(false);
  });
});
