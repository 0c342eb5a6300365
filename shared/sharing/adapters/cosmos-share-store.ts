// The Cosmos DB adapter of ShareStore: `shares` (partition /shareId: a head and its chunks) and `share-links`
// (partition /userId: one link per share). Every shareId is checked against its closed format before it reaches
// an item's URL or a partition key; items of a share with an expiry carry a TTL that removes them after it.
import type { Container } from '@azure/cosmos';
import {
  createItem,
  deleteItem,
  deletePartitionItems,
  expiryTtl,
  queryItems,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { UnsafeItemIdError } from '../../cosmos/adapters/guarded-item.js';
import { isId } from '../../ids.js';
import {
  SHARE_HEAD_ID,
  shareChunkId,
  shareChunkSchema,
  shareHeadSchema,
  shareLinkSchema,
  type ShareChunk,
  type ShareHead,
  type ShareLink,
} from '../contracts.js';
import type { ShareStore } from '../share-store.js';

/** Kept this long past their expiry (readers check the expiry themselves), then removed by Cosmos DB. */
const EXPIRED_GRACE_SECONDS = 3_600;

export interface ShareContainers {
  shares: Container;
  links: Container;
}

function checkedShareId(shareId: string): string {
  if (!isId('shareId', shareId))
    throw new UnsafeItemIdError('item id', shareId, 'not a shareId (22 base64url characters)');
  return shareId;
}

export function createCosmosShareStore(containers: ShareContainers): ShareStore {
  return {
    async create({ fields, chunks }) {
      const shareId = checkedShareId(fields.shareId);
      const ttl = expiryTtl(fields.expiresAt, EXPIRED_GRACE_SECONDS, Date.now());
      const { messageCount: _count, includesToolCalls: _tools, ...linkFields } = fields;
      const link: ShareLink = { ...linkFields, id: shareId, kind: 'share-link' };
      await createItem(containers.links, { ...link, ...ttl }, 'a share link');
      for (const [index, messages] of chunks.entries()) {
        const chunk: ShareChunk = { id: shareChunkId(index), kind: 'share-chunk', shareId, index, messages };
        await createItem(containers.shares, { ...chunk, ...ttl }, "a share's messages");
      }
      const head: ShareHead = { ...fields, id: SHARE_HEAD_ID, kind: 'share', chunkCount: chunks.length };
      await createItem(containers.shares, { ...head, ...ttl }, 'a share');
    },

    async head(shareId) {
      const read = await readItem(
        containers.shares,
        SHARE_HEAD_ID,
        checkedShareId(shareId),
        'a share',
        shareHeadSchema,
      );
      return read?.resource;
    },

    async messages(head) {
      const chunks = await queryItems(
        containers.shares,
        {
          query: "SELECT * FROM c WHERE c.kind = 'share-chunk' ORDER BY c.index",
        },
        checkedShareId(head.shareId),
        "a share's messages",
        shareChunkSchema,
      );
      return chunks.flatMap((chunk) => chunk.messages);
    },

    async link(userId, shareId) {
      const read = await readItem(
        containers.links,
        checkedShareId(shareId),
        userId,
        'a share link',
        shareLinkSchema,
      );
      return read?.resource;
    },

    async links(userId, { sessionId, limit }) {
      const links = await queryItems(
        containers.links,
        sessionId === undefined
          ? { query: 'SELECT * FROM c ORDER BY c.createdAt DESC' }
          : {
              query: 'SELECT * FROM c WHERE c.sessionId = @sessionId ORDER BY c.createdAt DESC',
              parameters: [{ name: '@sessionId', value: sessionId }],
            },
        userId,
        'share links',
        shareLinkSchema,
      );
      return links.slice(0, limit);
    },

    async revoke(userId, shareId) {
      const id = checkedShareId(shareId);
      await deleteItem(containers.shares, SHARE_HEAD_ID, id, 'a share');
      await deletePartitionItems(containers.shares, id, "a share's messages");
      await deleteItem(containers.links, id, userId, 'a share link');
    },
  };
}
