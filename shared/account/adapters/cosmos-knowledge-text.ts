// A knowledge document's text for the data archive, read back from its chunks (the uploaded bytes are not kept
// once the document is indexed): one single-partition query per document.
import type { Container } from '@azure/cosmos';
import { z } from 'zod';
import { queryItems } from '../../cosmos/adapters/cosmos-items.js';
import type { KnowledgeText } from '../archive-contents.js';

const chunkTextSchema = z.object({ index: z.number(), text: z.string() });

export function createCosmosKnowledgeText(chunks: Container): KnowledgeText {
  return {
    async read(library, documentId) {
      const found = await queryItems(
        chunks,
        {
          query: 'SELECT c["index"], c.text FROM c WHERE c.documentId = @documentId',
          parameters: [{ name: '@documentId', value: documentId }],
        },
        [library, documentId],
        'knowledge chunks',
        chunkTextSchema,
      );
      return found
        .sort((a, b) => a.index - b.index)
        .map((chunk) => chunk.text)
        .join('\n\n');
    },
  };
}
