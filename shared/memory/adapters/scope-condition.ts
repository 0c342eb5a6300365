// Which stored memory items a list of scopes selects, as Cosmos DB SQL: derived from inScopes (through scopeOf, the one
// rule of what an item's scope is: one that names none is the user's shared memory), so a query and a filter agree.
import type { SqlParameter } from '@azure/cosmos';
import { inScopes, type MemoryScope } from '../../conversation/memory-scope.js';

/** The condition on `c.scope` that selects what inScopes(item, scopes) keeps, and its parameter. */
export function scopeCondition(scopes: readonly MemoryScope[]): { sql: string; parameters: SqlParameter[] } {
  const named = 'ARRAY_CONTAINS(@scopes, c.scope)';
  return {
    // An item that names no scope is in them when scopeOf's reading of it is.
    sql: inScopes({}, scopes) ? `(NOT IS_DEFINED(c.scope) OR ${named})` : named,
    parameters: [{ name: '@scopes', value: [...scopes] }],
  };
}
