// What deleting a conversation erases outside history's own containers, composed once: its turns' data and posted
// records, its spend's ties to it (kept in the user's totals), every share link made of it, and its attachments.
import type { Database } from '@azure/cosmos';
import { SESSIONS_CONTAINER } from '../chat/contracts/documents.js';
import type { HotStore } from '../conversation/hot-store.js';
import { createCosmosConversationEraser } from '../history/adapters/cosmos-conversation-eraser.js';
import type { ConversationEraser } from '../history/conversation-eraser.js';
import { createCosmosShareStore } from '../sharing/adapters/cosmos-share-store.js';
import { SHARE_LINKS_CONTAINER, SHARES_CONTAINER } from '../sharing/contracts.js';
import { revokingShares } from '../sharing/share-links.js';
import type { ShareStore } from '../sharing/share-store.js';
import { TURN_EVENTS_CONTAINER } from '../streaming/contracts.js';
import type { UsageAccounting } from './usage-accounting.js';
import type { AttachmentStore } from '../attachments/attachment-store.js';
import { erasingAttachments } from './attachment-services.js';

export function composeEraser(
  database: Database,
  hot: HotStore,
  usage: Pick<UsageAccounting, 'detaching'>,
  attachments: AttachmentStore,
): { eraser: ConversationEraser; shares: ShareStore } {
  const shares = createCosmosShareStore({
    shares: database.container(SHARES_CONTAINER),
    links: database.container(SHARE_LINKS_CONTAINER),
  });
  const turnData = createCosmosConversationEraser({
    hot,
    turnEvents: database.container(TURN_EVENTS_CONTAINER),
    sessions: database.container(SESSIONS_CONTAINER),
  });
  return {
    eraser: erasingAttachments(revokingShares(usage.detaching(turnData), shares), attachments),
    shares,
  };
}
