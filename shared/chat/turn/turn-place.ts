// The turn's place in the conversation's tree: decided when it begins (it continues the active path, or an edit or
// a regenerate follows the replaced turn's parent), and kept at the commit, whatever branch the user shows by then.
import { NotReadyError } from '../../errors.js';
import { activeLeaf, continuationFrom, type PathLeaf } from '../../conversation/active-path.js';
import { forkBranch } from '../../conversation/branch-path.js';
import type { ConversationMessage, TurnRef } from '../../conversation/messages.js';
import type { TurnBranch, TurnFork } from '../../conversation/branches.js';
import type { TurnRecord } from '../contracts/documents.js';
import {
  PathMovedError,
  type AppendOptions,
  type WorkingMemory,
} from '../../conversation/working-memory-store.js';
import type { PlacePorts } from './turn-services.js';

/**
 * Where a turn goes in the conversation's tree, decided when it begins, and working memory from then on. A plain
 * turn continues the active path. An edit or a regenerate of X follows X's parent: working memory moves to the
 * parent's path first (unless it is the leaf already), so the prompt, later rounds and the commit all see that path;
 * so a retried round 0 finds the parent as the leaf and decides the same branch. A replaced turn (or its parent)
 * that cannot be found yet (history still storing it) fails the attempt, which the activity's retry repeats.
 */
export async function beginTurn(
  services: PlacePorts,
  ref: TurnRef,
  fork: TurnFork | undefined,
  memory: WorkingMemory,
): Promise<{ branch: TurnBranch; memory: WorkingMemory }> {
  if (fork === undefined)
    return { branch: continuationFrom(activeLeaf(memory), memory.messageCount), memory };
  const { userId, sessionId } = ref;
  const replaced = await services.workingMemory.findTurn(userId, sessionId, fork.replaces, memory);
  if (replaced === undefined)
    throw new NotReadyError(
      `Turn ${fork.replaces}, which turn ${ref.chatMessageId} replaces, is not found yet.`,
    );
  const parentId = replaced.branch.parentChatMessageId;
  let parent: PathLeaf | undefined;
  let moved = memory;
  if (parentId !== null) {
    const leaf = activeLeaf(memory);
    if (leaf?.chatMessageId === parentId) parent = leaf;
    else {
      parent = await services.workingMemory.findTurn(userId, sessionId, parentId, memory);
      if (parent === undefined)
        throw new NotReadyError(
          `Turn ${parentId}, where turn ${ref.chatMessageId} branches, is not found yet.`,
        );
      moved = await services.workingMemory.showPath(userId, sessionId, parent, memory);
    }
  }
  const branch = forkBranch({
    fork,
    newChatMessageId: ref.chatMessageId,
    replaced: replaced.branch,
    parent,
    firstOrdinal: moved.messageCount,
  });
  return { branch, memory: moved };
}

/**
 * The place of a failed turn that never recorded one (it failed in round 0): decided as round 0 decides it. When
 * even that fails (the replaced turn is still not found, or its path is full of forks), the message continues the
 * active path, so it is kept where the user looks, and the reason is logged.
 */
export async function failedTurnPlace(
  services: PlacePorts,
  ref: TurnRef,
  fork: TurnFork | undefined,
  memory: WorkingMemory,
): Promise<{ branch?: TurnBranch; memory: WorkingMemory }> {
  try {
    return await beginTurn(services, ref, fork, memory);
  } catch (error) {
    services.log?.warn(
      `Failed turn ${ref.chatMessageId} could not take its branch; it continues the active path:`,
      error,
    );
    return { memory };
  }
}

/**
 * Commits a turn's messages on its branch. When its parent is no longer the active path's leaf (the user switched
 * branches while it ran), the path moves back to the parent first: the answer lands where it was asked, and the
 * conversation shows it, as after any commit.
 */
export async function commitMessages(
  services: PlacePorts,
  ref: TurnRef,
  messages: readonly ConversationMessage[],
  memory: WorkingMemory,
  record: Pick<TurnRecord, 'systemPrompt' | 'branch'>,
): Promise<WorkingMemory> {
  const options: AppendOptions = {
    ...(record.systemPrompt ? { systemPrompt: record.systemPrompt } : {}),
    ...(record.branch ? { branch: record.branch } : {}),
  };
  const { userId, sessionId } = ref;
  try {
    return await services.workingMemory.append(userId, sessionId, messages, memory, options);
  } catch (error) {
    if (!(error instanceof PathMovedError)) throw error;
    const moved = await showParentPath(services, ref, error.parentChatMessageId);
    return services.workingMemory.append(userId, sessionId, messages, moved, options);
  }
}

/**
 * Working memory on the path of the turn's parent, the leaf the turn follows: as it is when that is the leaf
 * already (no read, no write), else moved back there (the user switched branches while the turn ran). `base`, when
 * current, saves the reads.
 */
export async function showParentPath(
  services: PlacePorts,
  ref: TurnRef,
  parentChatMessageId: string,
  base?: WorkingMemory,
): Promise<WorkingMemory> {
  if (base !== undefined && activeLeaf(base)?.chatMessageId === parentChatMessageId) return base;
  const { userId, sessionId } = ref;
  const parent = await services.workingMemory.findTurn(userId, sessionId, parentChatMessageId, base);
  if (parent === undefined)
    throw new NotReadyError(
      `Turn ${parentChatMessageId}, which turn ${ref.chatMessageId} follows, is not found yet.`,
    );
  return services.workingMemory.showPath(userId, sessionId, parent, base);
}
