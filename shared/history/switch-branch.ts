// Switches the branch a conversation shows (PUT .../branch): the active path becomes that of the chosen turn's
// branch as it was last continued, in working memory and on the header, so the next turn continues it there.
import { activeLeaf, pathOf, type PathLeaf } from '../conversation/active-path.js';
import { gapsAfter } from '../conversation/branch-path.js';
import { MAIN_BRANCH } from '../conversation/branches.js';
import type { WorkingMemory } from '../conversation/working-memory-store.js';
import type { PostedMessageStore } from '../conversation/posted-message-store.js';
import { NotFoundError, NotReadyError } from '../errors.js';
import type { ConversationHeader, ConversationWithMessages } from './contracts.js';
import { notFound, requireHeader, type HistoryReadServices } from './conversation-reads.js';
import { getConversation } from './get-conversation.js';
import type { SwitchBranchQuery } from './history-queries.js';
import { preview } from './header-preview.js';

/** A switch also tells a turn posted but not answered yet from an unknown one. */
export type SwitchBranchServices = HistoryReadServices & { posted: Pick<PostedMessageStore, 'find'> };

/**
 * Shows the branch the turn `chatMessageId` is on, as it was last continued: the active path becomes the path of
 * that branch's newest turn (in working memory and on the header), so the conversation shows it and the next turn
 * continues it. Answers the new path's first page. An unknown turn (or another user's conversation) → 404; a turn
 * posted but not answered yet, a path whose newest messages the history worker has not stored yet and working
 * memory no longer holds, or a switch a turn's commit overtook → 409, retry.
 */
export async function switchBranch(
  services: SwitchBranchServices,
  userId: string,
  sessionId: string,
  chatMessageId: string,
  query: SwitchBranchQuery,
): Promise<ConversationWithMessages> {
  const header = await requireHeader(services.headers, userId, sessionId);
  const memory = await services.workingMemory.load(userId, sessionId);
  const target = await services.workingMemory.findTurn(userId, sessionId, chatMessageId, memory);
  if (target === undefined) {
    // A turn posted but not answered yet has no place to show: retried once it has (as an edit of it would be).
    if ((await services.posted.find(userId, sessionId, chatMessageId)) !== undefined)
      throw new NotReadyError(
        `Turn '${chatMessageId}' is still being answered: switch to it once its answer has ended (message-end or error).`,
        2,
      );
    throw new NotFoundError(`No turn '${chatMessageId}' in conversation '${sessionId}'.`);
  }
  const leaf = await newestOfBranch(services, header, memory, target);
  // Continuing a branch after other branches' turns skips them with one more gap: a path that has all it may
  // have could be shown but not continued, so it is refused here (gapsAfter's 409) rather than failing the next turn.
  gapsAfter(leaf.branch.gaps, leaf.lastOrdinal, memory.messageCount);
  if (activeLeaf(memory)?.chatMessageId !== leaf.chatMessageId) {
    const moved = await services.workingMemory.showPath(userId, sessionId, leaf, memory);
    const shown = moved.messages.findLast((message) => message.content.trim() !== '');
    // The header names the path working memory shows, unless a turn committed since (its path is the newer).
    const changed = await services.headers.setPath(userId, sessionId, {
      path: pathOf(activeLeaf(moved) ?? leaf),
      preview: preview(shown?.content ?? ''),
      messageCount: moved.messageCount,
    });
    if (changed === 'missing') throw notFound(sessionId);
    if (changed === 'moved')
      throw new NotReadyError(
        'A turn of this conversation was answered while it switched branches: switch again to show that branch.',
      );
  }
  return getConversation(services, userId, sessionId, { ...query });
}

/** The newest turn of `target`'s branch: long-term history's, or a newer one working memory holds. */
async function newestOfBranch(
  services: HistoryReadServices,
  header: ConversationHeader,
  memory: WorkingMemory,
  target: PathLeaf,
): Promise<PathLeaf> {
  const branchId = target.branch.branchId;
  const stored = await services.messages.newestOfBranch(header.userId, header.sessionId, branchId);
  let newest =
    stored === undefined ? undefined : { chatMessageId: stored.chatMessageId, ordinal: stored.ordinal };
  for (const message of [...memory.messages, ...(memory.offPath ?? [])]) {
    if (message.ordinal === undefined || (message.branch?.branchId ?? MAIN_BRANCH) !== branchId) continue;
    if (newest === undefined || message.ordinal > newest.ordinal)
      newest = { chatMessageId: message.chatMessageId, ordinal: message.ordinal };
  }
  if (
    newest === undefined ||
    newest.chatMessageId === target.chatMessageId ||
    newest.ordinal < target.lastOrdinal
  )
    return target;
  const found = await services.workingMemory.findTurn(
    header.userId,
    header.sessionId,
    newest.chatMessageId,
    memory,
  );
  return found ?? target;
}
