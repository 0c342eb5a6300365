// Memory by scope for the memory API and MCP: which scope a request names, whether a scope is the caller's to write
// to (their own project, an assistant they may use), and moving a fact from one scope to another.
import { z } from 'zod';
import { NotFoundError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { memoryScopeSchema, scopeField, scopeOf, type MemoryScope } from '../conversation/memory-scope.js';
import type { ProfileFact } from './contracts.js';
import { FACT_WRITE_ATTEMPTS, type ProfileFacts } from './profile-facts.js';

/**
 * Refuses a scope that is not the caller's (NotFoundError: an assistant they may not use, a project of another
 * user, one that does not exist). A port, so memory needs nothing of assistants or projects: the composition root
 * passes their stores.
 */
export type ScopeAccess = (caller: Caller, scope: MemoryScope) => Promise<void>;

/** `?scope=` of GET .../memories, and the argument of the MCP tools. */
export const scopeFilterSchema = memoryScopeSchema.optional();

/** PATCH .../memories/{factId}: where the fact is to live. */
export const moveFactBodySchema = z.object(
  { scope: memoryScopeSchema },
  { error: 'the body must be a JSON object with the scope to move the fact to' },
);

export interface MoveFactServices {
  facts: Pick<ProfileFacts, 'get' | 'put'>;
  access: ScopeAccess;
  now?: () => Date;
}

/**
 * Moves one of the caller's facts to another scope: its provenance, validity and status stay as they are. A fact
 * the caller has none of, or a scope not theirs, is a NotFoundError; a fact already there is left as it is.
 */
export async function moveFact(
  services: MoveFactServices,
  caller: Caller,
  factId: string,
  scope: MemoryScope,
): Promise<ProfileFact> {
  await services.access(caller, scope);
  for (let attempt = 1; attempt <= FACT_WRITE_ATTEMPTS; attempt++) {
    const stored = await services.facts.get(caller.userId, factId);
    if (stored === undefined) throw new NotFoundError(`No fact '${factId}' in this user's memories.`);
    if (scopeOf(stored.fact) === scope) return stored.fact;
    const { scope: _from, ...rest } = stored.fact;
    const moved: ProfileFact = {
      ...rest,
      ...scopeField(scope),
      updatedAt: (services.now?.() ?? new Date()).toISOString(),
    };
    if ((await services.facts.put(moved, stored.version)) === 'written') return moved;
  }
  throw new Error(`The fact '${factId}' kept changing while it was moved; try again.`);
}

/** The scopes a filter reads: the one named, or (undefined) every scope. */
export function scopesOf(scope: MemoryScope | undefined): readonly MemoryScope[] | undefined {
  return scope === undefined ? undefined : [scope];
}
