// A user's active profile facts copied into one item of their partition (id `active-facts`), so a consolidation
// reads them with a point read instead of a query and its query plan. Every fact write changes the copy in the same
// transactional batch; a profile without the copy yet (stored before it) gets one made from a query.
import type { Container, JSONObject, OperationInput } from '@azure/cosmos';
import { z } from 'zod';
import { cosmosFailure, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { UnsafeItemIdError, unsafeReason } from '../../cosmos/adapters/guarded-item.js';
import { profileFactSchema, type ProfileFact } from '../contracts.js';

const COPY_ID = 'active-facts';

/** The copy: each fact by id, null once it is no longer active (or deleted). */
const copySchema = z.object({
  id: z.literal(COPY_ID),
  userId: z.string(),
  kind: z.literal('active-facts'),
  facts: z.record(z.string(), profileFactSchema.nullable()),
});
type ActiveFactsCopy = z.infer<typeof copySchema>;

/** Batches tried for one write: the copy may be missing, then made by another writer first. */
const WRITE_ATTEMPTS = 4;

export interface ActiveFactsSource {
  /** The user's active facts as the fact items hold them (a query): where a missing copy is made from. */
  activeFacts(userId: string): Promise<ProfileFact[]>;
}

export interface ActiveFacts {
  /** The user's active facts: one point read (a query the first time, which makes the copy). */
  read(userId: string): Promise<ProfileFact[]>;
  /** Writes the fact if still at `version` (undefined: only if there is none), with the copy; false on a conflict. */
  write(fact: ProfileFact, version: string | undefined): Promise<boolean>;
  /** Deletes the fact (if still at `version`), with the copy; false when it is gone or changed. */
  remove(userId: string, factId: string, version: string | undefined): Promise<boolean>;
}

export function activeFactsCopy(container: Container, source: ActiveFactsSource): ActiveFacts {
  const what = "the profile's active facts";

  /** A copy made from the fact items, with one fact's change applied (the write it goes with). */
  async function freshCopy(userId: string, change: [string, ProfileFact | null]): Promise<ActiveFactsCopy> {
    const facts: Record<string, ProfileFact | null> = {};
    for (const fact of await source.activeFacts(userId)) facts[fact.id] = fact;
    facts[change[0]] = change[1];
    return { id: COPY_ID, userId, kind: 'active-facts', facts };
  }

  /**
   * The fact's own operation and the copy's change in one batch: patched where the copy is, else created with the
   * batch (another writer's create first makes it a patch again). Whether the fact's operation was applied.
   */
  async function withCopy(
    userId: string,
    factOperation: OperationInput,
    factId: string,
    entry: ProfileFact | null,
  ) {
    assertSafe(userId, factId);
    let create = false;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const copyOperation: OperationInput = create
        ? {
            operationType: 'Create',
            resourceBody: (await freshCopy(userId, [factId, entry])) as unknown as JSONObject,
          }
        : {
            operationType: 'Patch',
            id: COPY_ID,
            resourceBody: {
              operations: [{ op: 'set', path: `/facts/${pointerSegment(factId)}`, value: entry }],
            },
          };
      const failed = await runBatch(container, [factOperation, copyOperation], userId, what);
      if (failed === undefined) return true;
      if (failed.index === 0 && [404, 409, 412].includes(failed.statusCode)) return false;
      if (failed.index === 1 && failed.statusCode === 404 && !create) create = true;
      else if (failed.index === 1 && failed.statusCode === 409 && create) create = false;
      else throw cosmosFailure(`writing ${what}`, new Error(`the batch answered ${failed.statusCode}`));
    }
    throw cosmosFailure(`writing ${what}`, new Error('the copy kept appearing and disappearing'));
  }

  return {
    async read(userId) {
      const read = await readItem(container, COPY_ID, userId, what, copySchema);
      if (read !== undefined)
        return Object.values(read.resource.facts).filter((fact): fact is ProfileFact => fact !== null);
      const active = await source.activeFacts(userId);
      // Made from the query only if no fact was written since: every fact write changes or makes the copy itself.
      const copy: ActiveFactsCopy = {
        id: COPY_ID,
        userId,
        kind: 'active-facts',
        facts: Object.fromEntries(active.map((fact) => [fact.id, fact])),
      };
      await runBatch(
        container,
        [{ operationType: 'Create', resourceBody: copy as unknown as JSONObject }],
        userId,
        what,
      );
      return active;
    },

    write(fact, version) {
      const body = fact as unknown as JSONObject;
      const operation: OperationInput =
        version === undefined
          ? { operationType: 'Create', resourceBody: body }
          : { operationType: 'Replace', id: fact.id, resourceBody: body, ifMatch: version };
      return withCopy(fact.userId, operation, fact.id, fact.status === 'active' ? fact : null);
    },

    remove(userId, factId, version) {
      const operation: OperationInput = {
        operationType: 'Delete',
        id: factId,
        ...(version === undefined ? {} : { ifMatch: version }),
      };
      return withCopy(userId, operation, factId, null);
    },
  };
}

/** The operation that failed a batch, or undefined when all were applied. */
async function runBatch(
  container: Container,
  operations: OperationInput[],
  partitionKey: string,
  what: string,
): Promise<{ index: number; statusCode: number } | undefined> {
  let response;
  try {
    response = await container.items.batch(operations, partitionKey, {
      contentResponseOnWriteEnabled: false,
    });
  } catch (error) {
    throw cosmosFailure(`writing ${what}`, error);
  }
  const results = response.result ?? [];
  const index = results.findIndex((result) => result.statusCode >= 400 && result.statusCode !== 424);
  if (index >= 0) return { index, statusCode: results[index]!.statusCode };
  if (response.code !== undefined && response.code >= 300)
    throw cosmosFailure(`writing ${what}`, new Error(`the batch answered ${response.code}`));
  return undefined;
}

/** A batch names its items in its body, not in a URL, but their ids keep the same closed format. */
function assertSafe(userId: string, factId: string): void {
  for (const [kind, value] of [
    ['partition key', userId],
    ['item id', factId],
  ] as const) {
    const reason = unsafeReason(value);
    if (reason !== undefined) throw new UnsafeItemIdError(kind, value, reason);
  }
}

/** An id as one segment of a patch's JSON Pointer path. */
function pointerSegment(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}
