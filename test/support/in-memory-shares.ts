// The in-memory twin of the share store: heads, chunks and links in maps, written and revoked in the order the
// Cosmos DB adapter follows, so tests can look at what a share keeps.
import type { ShareChunk, ShareHead, ShareLink } from '../../shared/sharing/contracts.js';
import { SHARE_HEAD_ID, shareChunkId } from '../../shared/sharing/contracts.js';
import type { ShareStore } from '../../shared/sharing/share-store.js';

export class MemoryShareStore implements ShareStore {
  readonly heads = new Map<string, ShareHead>();
  readonly chunks = new Map<string, ShareChunk[]>();
  /** By `${userId}/${shareId}`. */
  readonly linkItems = new Map<string, ShareLink>();

  create({ fields, chunks }: Parameters<ShareStore['create']>[0]) {
    const { messageCount: _count, includesToolCalls: _tools, ...linkFields } = fields;
    this.linkItems.set(`${fields.userId}/${fields.shareId}`, {
      ...linkFields,
      id: fields.shareId,
      kind: 'share-link',
    });
    this.chunks.set(
      fields.shareId,
      chunks.map((messages, index) => ({
        id: shareChunkId(index),
        kind: 'share-chunk' as const,
        shareId: fields.shareId,
        index,
        messages: structuredClone(messages),
      })),
    );
    this.heads.set(fields.shareId, {
      ...fields,
      id: SHARE_HEAD_ID,
      kind: 'share',
      chunkCount: chunks.length,
    });
    return Promise.resolve();
  }
  head(shareId: string) {
    const head = this.heads.get(shareId);
    return Promise.resolve(head === undefined ? undefined : structuredClone(head));
  }
  messages(head: ShareHead) {
    return Promise.resolve(structuredClone((this.chunks.get(head.shareId) ?? []).flatMap((c) => c.messages)));
  }
  link(userId: string, shareId: string) {
    return Promise.resolve(this.linkItems.get(`${userId}/${shareId}`));
  }
  links(userId: string, { sessionId, limit }: { sessionId?: string; limit: number }) {
    return Promise.resolve(
      [...this.linkItems.values()]
        .filter((link) => link.userId === userId && (sessionId === undefined || link.sessionId === sessionId))
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .slice(0, limit),
    );
  }
  revoke(userId: string, shareId: string) {
    this.heads.delete(shareId);
    this.chunks.delete(shareId);
    this.linkItems.delete(`${userId}/${shareId}`);
    return Promise.resolve();
  }
}
