// The Cosmos DB adapter of KnowledgeDocuments (partition library, id = documentId): point reads, a create
// that reports an existing record, replaces on the version read, and a newest-first list behind an opaque
// token.
import type { Container, SqlParameter } from '@azure/cosmos';
import { z } from 'zod';
import { deleteItem, parseStored, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { writeOnVersion } from '../../cosmos/adapters/cosmos-patch.js';
import { listKey, readListPage } from '../../cosmos/adapters/list-pages.js';
import { knowledgeDocumentSchema, type KnowledgeDocument } from '../contracts.js';
import type { KnowledgeDocuments } from '../knowledge-documents.js';

const what = 'the knowledge document';

export function createCosmosKnowledgeDocuments(container: Container): KnowledgeDocuments {
  return {
    async get(library, documentId) {
      const read = await readItem(container, documentId, library, what, knowledgeDocumentSchema);
      return read?.resource.library === library ? { document: read.resource, version: read.etag } : undefined;
    },

    async create(document) {
      const written = await writeOnVersion(container, stored(document), document.library, undefined, what);
      // A create conflicts only with a record of the same id in the library: the same content uploaded before.
      return written === 'conflict' ? 'exists' : 'created';
    },

    async replace(document, version) {
      const written = await writeOnVersion(container, stored(document), document.library, version, what);
      return written === 'conflict' ? 'conflict' : 'written';
    },

    async list(library, options) {
      const parameters: SqlParameter[] = [
        { name: '@kind', value: KIND },
        { name: '@deleting', value: 'deleting' },
      ];
      let filter = 'c.kind = @kind AND c.status != @deleting';
      if (options.ownerId !== undefined) {
        filter += ' AND c.ownerId = @ownerId';
        parameters.push({ name: '@ownerId', value: options.ownerId });
      }
      const page = await readListPage(container, {
        query: { query: `SELECT * FROM c WHERE ${filter} ORDER BY c.createdAt DESC`, parameters },
        partitionKey: library,
        limit: options.limit,
        ...(options.continuationToken === undefined ? {} : { continuationToken: options.continuationToken }),
        // The token continues this library's list with this owner filter only (null: the whole library).
        list: listKey([KNOWLEDGE_LIST, library, options.ownerId ?? null]),
        // The schema leaves Cosmos DB's system properties (_rid, _etag, ...) out.
        parse: (resources) => parseStored(z.array(knowledgeDocumentSchema), resources, 'knowledge documents'),
        what: 'listing knowledge documents',
      });
      return page.continuationToken === undefined
        ? { documents: page.items }
        : { documents: page.items, continuationToken: page.continuationToken };
    },

    delete(library, documentId) {
      return deleteItem(container, documentId, library, what);
    },
  };
}

const KIND = 'knowledge-document';
const KNOWLEDGE_LIST = 'knowledge-documents';

/** The stored item: its id is its documentId (the contract's rule), whatever the caller left in `id`. */
function stored(document: KnowledgeDocument): KnowledgeDocument {
  return { ...document, id: document.documentId };
}
