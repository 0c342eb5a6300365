import { describe, expect, it } from 'vitest';
import type { ChunkQuery } from '../knowledge-chunks.js';
import { chunkSearchQuery } from './knowledge-chunk-query.js';

const query: ChunkQuery = {
  libraries: ['private:user_001', 'shared'],
  text: 'parental leave',
  vector: [0.1, 0.2],
  limit: 5,
  relevance: { minSimilarity: 0.3, textMatchAdmits: true },
};

const parameter = (spec: ReturnType<typeof chunkSearchQuery>, name: string) =>
  spec.query.parameters?.find((each) => each.name === name)?.value;

describe('the knowledge chunks query', () => {
  it('searches every visible chunk of the libraries when no documents are named', () => {
    const spec = chunkSearchQuery(query, ['hidden-doc']);
    expect(spec.query.query).toContain(
      'WHERE ARRAY_CONTAINS(@libraries, c.library) AND NOT ARRAY_CONTAINS(@hidden, c.documentId) ORDER BY',
    );
    expect(spec.query.query).not.toContain('@documents');
    expect(parameter(spec, '@documents')).toBeUndefined();
    expect(parameter(spec, '@libraries')).toEqual(['private:user_001', 'shared']);
    expect(parameter(spec, '@hidden')).toEqual(['hidden-doc']);
  });

  it('narrows to the named documents by a parameter, each once, never by their text in the query', () => {
    const named = ['doc-a', "doc-b') OR 1=1 --", 'doc-a'];
    const spec = chunkSearchQuery({ ...query, documentIds: named }, []);
    expect(spec.query.query).toContain(
      'WHERE ARRAY_CONTAINS(@libraries, c.library) AND NOT ARRAY_CONTAINS(@hidden, c.documentId) ' +
        'AND ARRAY_CONTAINS(@documents, c.documentId) ORDER BY',
    );
    expect(parameter(spec, '@documents')).toEqual(['doc-a', "doc-b') OR 1=1 --"]);
    expect(spec.query.query).not.toContain('doc-b');
    // Still bounded by the caller's libraries: a named document elsewhere is never read.
    expect(parameter(spec, '@libraries')).toEqual(['private:user_001', 'shared']);
  });

  it('narrows to no document at all for an empty list', () => {
    const spec = chunkSearchQuery({ ...query, documentIds: [] }, []);
    expect(spec.query.query).toContain('AND ARRAY_CONTAINS(@documents, c.documentId)');
    expect(parameter(spec, '@documents')).toEqual([]);
  });
});
