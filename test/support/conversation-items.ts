// What a deleted conversation may leave behind: every item, in every container the app declares, that names the
// session (by its sessionId or in its id), except the conversation's tombstone, the one item meant to stay.
import type { LocalRuntime } from '../../local/runtime.js';
import { SESSIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import { cosmosContainers } from '../../shared/app/cosmos-containers.js';

interface FoundItem {
  id: string;
  sessionId?: string;
  deletedAt?: string;
  ttl?: number;
}

/** `container/id` of each item of the session left in Cosmos DB, the tombstone aside. */
export async function itemsOf(runtime: LocalRuntime, sessionId: string): Promise<string[]> {
  const found: string[] = [];
  for (const spec of cosmosContainers) {
    const items = await queryAll(runtime, spec.id, sessionId);
    for (const item of items)
      if (!(spec.id === SESSIONS_CONTAINER && isTombstone(item, sessionId)))
        found.push(`${spec.id}/${item.id}`);
  }
  return found;
}

/** The session's tombstone, when its delete has finished. */
export async function tombstoneOf(runtime: LocalRuntime, sessionId: string): Promise<FoundItem | undefined> {
  const items = await queryAll(runtime, SESSIONS_CONTAINER, sessionId);
  return items.find((item) => isTombstone(item, sessionId));
}

function isTombstone(item: FoundItem, sessionId: string): boolean {
  return item.id === sessionId && item.deletedAt !== undefined;
}

async function queryAll(runtime: LocalRuntime, containerId: string, sessionId: string): Promise<FoundItem[]> {
  const { resources } = await runtime.clients.database
    .container(containerId)
    .items.query<FoundItem>({
      query:
        'SELECT c.id, c.sessionId, c.deletedAt, c.ttl FROM c WHERE c.sessionId = @s OR CONTAINS(c.id, @s)',
      parameters: [{ name: '@s', value: sessionId }],
    })
    .fetchAll();
  return resources;
}
