// The memory API's use-cases, shared by REST and MCP: what long-term memory holds about the user (facts with
// provenance and validity, summaries without vectors), the profile by category, and forgetting. Every read and
// delete is scoped to the caller's own partition.
import { z } from 'zod';
import { sessionIdSchema } from '../ids.js';
import { NotFoundError } from '../errors.js';
import { factIdSchema } from '../ids.js';
import { pageLimitSchema } from '../validation.js';
import {
  DEFAULT_SUMMARY_PAGE,
  MAX_SUMMARY_PAGE,
  PROFILE_CATEGORIES,
  type MemoriesPage,
  type ProfileCategory,
  type ProfileFact,
  type ProfileFactView,
} from './contracts.js';
import type { ConversationSummaries } from './conversation-summaries.js';
import {
  forgetAll,
  forgetConversation,
  forgetFact,
  type ForgetServices,
  type ForgottenAll,
  type ForgottenConversation,
} from './forget-memories.js';
import type { ProfileFacts } from './profile-facts.js';
import { scopeFilterSchema, scopesOf } from './memory-scopes.js';
import { scopeOf, type MemoryScope } from '../conversation/memory-scope.js';

export interface MemoryReadServices {
  summaries: ConversationSummaries;
  facts: ProfileFacts;
}

// --- Request parts ----------------------------------------------------------------------------------------

const BAD_TOKEN = 'is not a token this API gave: pass back the continuationToken of the previous page';

export { factIdSchema };

export const memoriesQuerySchema = z.object({
  limit: pageLimitSchema(MAX_SUMMARY_PAGE, DEFAULT_SUMMARY_PAGE),
  continuationToken: z.string().min(1, BAD_TOKEN).max(4096, BAD_TOKEN).optional(),
  status: z.enum(['active', 'all'], { error: "must be 'active' or 'all'" }).default('all'),
  /** Only the memory of one scope: `user`, `assistant:<id>` or `project:<id>`. */
  scope: scopeFilterSchema,
});
export type MemoriesQuery = z.infer<typeof memoriesQuerySchema>;

/**
 * What DELETE .../memories removes: one fact, one conversation, or (neither) everything. Strict: a misspelt
 * parameter (`?factid=`) must not read as "delete everything".
 */
export const forgetQuerySchema = z
  .strictObject(
    { factId: factIdSchema.optional(), sessionId: sessionIdSchema.optional() },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown parameter ${issue.keys.map((key) => `'${key}'`).join(', ')}: use factId or sessionId, or neither to forget everything`
          : undefined,
    },
  )
  .refine((query) => query.factId === undefined || query.sessionId === undefined, {
    message: 'name factId or sessionId, not both',
  });
export type ForgetQuery = z.infer<typeof forgetQuerySchema>;

// --- Views ------------------------------------------------------------------------------------------------

// Their schemas are the contracts' (the OpenAPI document shows them); callers keep importing them from here.
export type { MemoriesPage, ProfileFactView } from './contracts.js';

/** One active fact as a prompt would use it. */
export interface ProfileEntry {
  factId: string;
  statement: string;
  /** Where it lives: `user`, `assistant:<id>` or `project:<id>`. */
  scope: MemoryScope;
  validFrom: string;
  /** How many messages stated it. */
  sources: number;
}

export interface UserProfile {
  /** The active facts by the profile's attribute, every attribute present (empty when nothing is known). */
  profile: Record<ProfileCategory, ProfileEntry[]>;
  /** With `includeHistory`: every fact, superseded and retracted ones too, with provenance and validity. */
  facts?: ProfileFactView[];
}

/** A fact as shown, its scope always named (`user` for the shared memory, whatever the item keeps). */
export function toFactView(fact: ProfileFact): ProfileFactView {
  const { id, kind: _kind, userId: _userId, ...rest } = fact;
  return { factId: id, ...rest, scope: scopeOf(fact) };
}

// --- Use-cases --------------------------------------------------------------------------------------------

export async function getMemories(
  services: MemoryReadServices,
  userId: string,
  query: MemoriesQuery,
): Promise<MemoriesPage> {
  const scopes = scopesOf(query.scope);
  const [facts, page] = await Promise.all([
    services.facts.list(userId, {
      ...(query.status === 'active' ? { statuses: ['active'] } : {}),
      ...(scopes === undefined ? {} : { scopes }),
    }),
    services.summaries.list(userId, {
      limit: query.limit,
      ...(query.scope === undefined ? {} : { scope: query.scope }),
      ...(query.continuationToken === undefined ? {} : { continuationToken: query.continuationToken }),
    }),
  ]);
  return {
    facts: facts.map(toFactView),
    summaries: page.summaries.map((summary) => ({ ...summary, scope: scopeOf(summary) })),
    ...(page.continuationToken === undefined ? {} : { continuationToken: page.continuationToken }),
  };
}

export async function getUserProfile(
  facts: ProfileFacts,
  userId: string,
  options: { includeHistory?: boolean; scope?: MemoryScope | undefined } = {},
): Promise<UserProfile> {
  const scopes = scopesOf(options.scope);
  const listed = await facts.list(userId, {
    ...(options.includeHistory ? {} : { statuses: ['active'] }),
    ...(scopes === undefined ? {} : { scopes }),
  });
  const profile = {} as Record<ProfileCategory, ProfileEntry[]>;
  for (const category of PROFILE_CATEGORIES) profile[category] = [];
  for (const fact of listed)
    if (fact.status === 'active')
      profile[fact.category].push({
        factId: fact.id,
        statement: fact.statement,
        scope: scopeOf(fact),
        validFrom: fact.validFrom,
        sources: fact.provenance.length,
      });
  return options.includeHistory ? { profile, facts: listed.map(toFactView) } : { profile };
}

export type Forgotten =
  | ({ forgot: 'everything' } & ForgottenAll)
  | { forgot: 'fact'; factId: string }
  | ({ forgot: 'conversation'; sessionId: string } & ForgottenConversation);

/**
 * Forgets what the query names: one fact (NotFoundError when the user has none of that id), one conversation
 * (nothing to forget is not an error: it may never have been summarised), or everything.
 */
export async function forgetMemories(
  services: ForgetServices,
  userId: string,
  query: ForgetQuery,
): Promise<Forgotten> {
  if (query.factId !== undefined) {
    if (!(await forgetFact(services, userId, query.factId)))
      throw new NotFoundError(`No fact '${query.factId}' in this user's memories.`);
    return { forgot: 'fact', factId: query.factId };
  }
  if (query.sessionId !== undefined)
    return {
      forgot: 'conversation',
      sessionId: query.sessionId,
      ...(await forgetConversation(services, userId, query.sessionId)),
    };
  return { forgot: 'everything', ...(await forgetAll(services, userId)) };
}
