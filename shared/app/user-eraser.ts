// "Delete all my data": every conversation through the conversation delete (its tombstone first, so a running
// turn's workers write nothing back), then memory, knowledge, attachments, and a sweep of every container for
// whatever else names the user. Only the conversations' tombstones stay, until their own expiry.
import type { Database } from '@azure/cosmos';
import { mapBounded } from '../bounded-parallel.js';
import { SESSIONS_CONTAINER } from '../chat/contracts/documents.js';
import type { ContainerSpec } from '../cosmos/container-spec.js';
import { guardedItem } from '../cosmos/adapters/guarded-item.js';
import { NotFoundError } from '../errors.js';
import { CONVERSATIONS_CONTAINER } from '../history/contracts.js';
import { deleteConversation, type DeleteConversationServices } from '../history/delete-conversation.js';
import { privateLibrary, SHARED_LIBRARY } from '../knowledge/contracts.js';
import { deleteDocument, type DeleteServices } from '../knowledge/delete-document.js';
import { forgetAll, type ForgetServices } from '../memory/forget-memories.js';
import type { AttachmentStore } from '../attachments/attachment-store.js';
import { eraseExports, type ExportServices } from '../account/account-export.js';
import { exportInstanceId } from '../account/contracts.js';
import { isFinishedStatus, type OrchestrationClient } from '../durable/orchestration-client.js';
import { cosmosContainers } from './cosmos-containers.js';
import { anonymiseUsage } from './usage-anonymiser.js';

/** Conversations deleted at once: each stops and purges its own turns in parallel already. */
const CONVERSATION_PARALLELISM = 4;

export interface UserEraseServices {
  /** What erasing a user reaches beyond the areas' own use-cases: the database, swept container by container. */
  database: Database;
  conversations: DeleteConversationServices;
  memory: ForgetServices;
  knowledge: DeleteServices;
  attachments: Pick<AttachmentStore, 'deleteUser'>;
  /** Data archives: their records, bytes, and the jobs that write and expire them. */
  exports: Pick<ExportServices, 'archives' | 'records'> & { orchestrations: OrchestrationClient };
  /** What becomes of usage records (ERASE_USAGE_RECORDS). */
  usageRecords: 'delete' | 'keep-anonymised';
}

export interface ErasedUser {
  conversations: number;
  documents: number;
  attachments: number;
  archives: number;
  /** Usage records kept, anonymised (ERASE_USAGE_RECORDS=keep-anonymised). */
  anonymised: number;
  /** Items the sweep found left in the containers (assistants, projects, MCP servers, usage, quotas, ...). */
  swept: number;
}

/** Erases everything of the user; running it again finds nothing more to erase. */
export async function eraseUser(services: UserEraseServices, userId: string): Promise<ErasedUser> {
  const sessionIds = await conversationsOf(services.database, userId);
  await mapBounded(sessionIds, CONVERSATION_PARALLELISM, async (sessionId) => {
    try {
      await deleteConversation(services.conversations, userId, sessionId);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error; // deleted before: its tombstone stands
    }
  });
  await forgetAll(services.memory, userId);
  let documents = 0;
  for (const library of [privateLibrary(userId), SHARED_LIBRARY]) {
    for (const documentId of await documentsOf(services.knowledge, library, userId)) {
      try {
        await deleteDocument(services.knowledge, userId, documentId);
        documents += 1;
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
    }
  }
  const attachments = await services.attachments.deleteUser(userId);
  const archives = await eraseArchives(services.exports, userId);
  const anonymised =
    services.usageRecords === 'keep-anonymised' ? await anonymiseUsage(services.database, userId) : 0;
  const swept = await sweep(services.database, cosmosContainers, userId);
  return { conversations: sessionIds.length, documents, attachments, archives, anonymised, swept };
}

/** The archives' blobs, and their jobs (stopped and forgotten: their input names the user); the sweep takes the records. */
async function eraseArchives(exports: UserEraseServices['exports'], userId: string): Promise<number> {
  const { records, archives } = await eraseExports(exports, userId);
  for (const record of records) {
    const instanceId = exportInstanceId(record.id);
    const status = await exports.orchestrations.getStatus(instanceId);
    if (status === undefined) continue;
    if (!isFinishedStatus(status.runtimeStatus))
      await exports.orchestrations
        .terminate(instanceId, 'The user erased their data.')
        .catch(() => undefined);
    // A job that has not settled yet is purged by a later erase; its next step finds no record and does nothing.
    await exports.orchestrations.purge(instanceId).catch(() => false);
  }
  return archives;
}

/** The user's conversations: every session (live or being deleted) and every header. */
async function conversationsOf(database: Database, userId: string): Promise<string[]> {
  const ids = new Set<string>();
  for (const [container, field] of [
    [SESSIONS_CONTAINER, 'id'],
    [CONVERSATIONS_CONTAINER, 'sessionId'],
  ] as const) {
    const { resources } = await database
      .container(container)
      .items.query<string>(
        {
          query: `SELECT VALUE c.${field} FROM c WHERE c.userId = @userId AND NOT IS_DEFINED(c.deletedAt)`,
          parameters: [{ name: '@userId', value: userId }],
        },
        { partitionKey: userId },
      )
      .fetchAll();
    for (const id of resources) if (typeof id === 'string') ids.add(id);
  }
  return [...ids];
}

async function documentsOf(knowledge: DeleteServices, library: string, userId: string): Promise<string[]> {
  const ids: string[] = [];
  let continuationToken: string | undefined;
  do {
    const page = await knowledge.documents.list(library, {
      ownerId: userId,
      limit: 100,
      ...(continuationToken === undefined ? {} : { continuationToken }),
    });
    ids.push(...page.documents.map((document) => document.documentId));
    continuationToken = page.continuationToken;
  } while (continuationToken !== undefined);
  return ids;
}

/** What the sweep asks each container for: the items that name the user, the tombstones kept. */
export function sweepQuery(containerId: string): string {
  const keep = containerId === SESSIONS_CONTAINER ? ' AND NOT IS_DEFINED(c.deletedAt)' : '';
  return `SELECT * FROM c WHERE (c.userId = @userId OR c.ownerId = @userId)${keep}`;
}

/**
 * Removes every item left that names the user (`userId` or `ownerId`) in every container, but the conversations'
 * tombstones (a session with `deletedAt`), which writers read until they expire.
 */
async function sweep(
  database: Database,
  containers: readonly ContainerSpec[],
  userId: string,
): Promise<number> {
  let removed = 0;
  for (const spec of containers) {
    const container = database.container(spec.id);
    const { resources } = await container.items
      .query<Record<string, unknown>>({
        query: sweepQuery(spec.id),
        parameters: [{ name: '@userId', value: userId }],
      })
      .fetchAll();
    for (const item of resources) {
      const key = spec.partitionKeyPaths.map((path) => String(item[path.slice(1)]));
      try {
        await guardedItem(container, String(item.id), key.length === 1 ? (key[0] ?? '') : key).delete();
        removed += 1;
      } catch (error) {
        if ((error as { code?: number }).code !== 404) throw error;
      }
    }
  }
  return removed;
}
