// Taking long-term memory out and bringing it back: the export as NDJSON (one line per fact and per conversation
// summary, with scope, provenance and validity), and the import of such a file or of plain statements through the
// same merge the memory worker uses, with provenance `import` and ids from content so a second import adds nothing.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import type { LlmGateway } from '../llm/llm-gateway.js';
import {
  factSourceSchema,
  factStatusSchema,
  MAX_ACTIVE_FACTS,
  MAX_FACT_CHARS,
  profileCategorySchema,
  type FactSource,
  type ProfileCategory,
  type ProfileChange,
  type ProfileFact,
} from './contracts.js';
import type { ConversationSummaries } from './conversation-summaries.js';
import { toFactView } from './memory-api.js';
import { scopeFilterSchema } from './memory-scopes.js';
import {
  inScopes,
  memoryScopeSchema,
  scopeOf,
  USER_SCOPE,
  type MemoryScope,
} from '../conversation/memory-scope.js';
import { proposeProfileChanges, type ProposedProfileChanges } from './memory-llm.js';
import { applyChange, factIdsOf } from './profile-apply.js';
import { FACT_WRITE_ATTEMPTS, type ProfileFacts } from './profile-facts.js';
import { mergeProfileChanges, type DroppedChange } from './profile-merge.js';

/** The session id an imported fact's provenance names: no conversation has it. */
export const IMPORT_SOURCE = 'import';
/** The bytes an import request may carry (413 past it). */
export const MAX_IMPORT_BYTES = 1024 * 1024;
/** Statements (or fact lines) one import may bring: the profile's own size. */
export const MAX_IMPORT_FACTS = MAX_ACTIVE_FACTS;

/** Where a memory lives (memory-scope.ts); a line without one is the user's shared memory. */
const scopeSchema = memoryScopeSchema.default(USER_SCOPE);

/** A fact line of the export (and of an import file). */
export const exportedFactSchema = z.object({
  type: z.literal('fact'),
  scope: scopeSchema,
  factId: z.string().optional(),
  category: profileCategorySchema,
  statement: z.string().trim().min(1).max(MAX_FACT_CHARS),
  status: factStatusSchema.default('active'),
  validFrom: z.iso.datetime().optional(),
  validUntil: z.iso.datetime().optional(),
  provenance: z.array(factSourceSchema).optional(),
});
export type ExportedFact = z.infer<typeof exportedFactSchema>;

/** The import's body: a file of export lines (multipart `file`, or its text as `ndjson`), or plain statements. */
export const memoryImportBodySchema = z
  .object({
    ndjson: z.string().optional(),
    statements: z.array(z.string().trim().min(1).max(MAX_FACT_CHARS)).min(1).max(MAX_IMPORT_FACTS).optional(),
  })
  .refine((body) => (body.ndjson === undefined) !== (body.statements === undefined), {
    message: 'send either an NDJSON file (the export format) or {statements}, not both',
  });
export type MemoryImportBody = z.infer<typeof memoryImportBodySchema>;

export const memoryImportQuerySchema = z.object({
  /** Where plain statements go (fact lines name their own): the user's shared memory when absent. */
  scope: scopeFilterSchema,
  dryRun: z
    .enum(['true', 'false'], { error: "must be 'true' or 'false'" })
    .default('false')
    .transform((value) => value === 'true'),
});

const importedChangeSchema = z.object({
  op: z.enum(['add', 'reaffirm', 'replace', 'retract']),
  factId: z.string(),
  scope: memoryScopeSchema,
  category: profileCategorySchema.optional(),
  statement: z.string().optional(),
});

export const memoryImportResultSchema = z.object({
  dryRun: z.boolean(),
  /** The changes that write something (with dryRun, that would). */
  changes: z.array(importedChangeSchema),
  /** Facts the profile already holds from an earlier import: nothing to write. */
  unchanged: z.number().int().nonnegative(),
  /** Lines not imported: summaries (their conversations stay with the account they came from) and past facts. */
  skipped: z.number().int().nonnegative(),
  /** What the merge refused, with why. */
  dropped: z.array(z.object({ kind: z.string(), reason: z.string(), subject: z.string() })),
});
export type MemoryImportResult = z.infer<typeof memoryImportResultSchema>;

export interface MemoryTransferServices {
  facts: ProfileFacts;
  summaries: ConversationSummaries;
  /** The model that sorts plain statements into the profile's categories; not called for fact lines. */
  llm: LlmGateway;
  /** Refuses a scope the caller may not put memory in (an assistant or project not theirs). */
  access?: (scope: MemoryScope) => Promise<void>;
  now?: () => Date;
}

// --- Export -----------------------------------------------------------------------------------------------

/** Every fact (all statuses) and every conversation summary of the user, one JSON object per line. */
export async function exportMemory(
  services: Pick<MemoryTransferServices, 'facts' | 'summaries'>,
  userId: string,
): Promise<string> {
  const lines: string[] = [];
  for (const fact of await services.facts.list(userId))
    lines.push(JSON.stringify({ type: 'fact', ...toFactView(fact) }));
  let continuationToken: string | undefined;
  do {
    const page = await services.summaries.list(userId, {
      limit: 200,
      ...(continuationToken === undefined ? {} : { continuationToken }),
    });
    for (const summary of page.summaries)
      lines.push(JSON.stringify({ type: 'summary', ...summary, scope: scopeOf(summary) }));
    continuationToken = page.continuationToken;
  } while (continuationToken !== undefined);
  return lines.map((line) => `${line}\n`).join('');
}

// --- Import -----------------------------------------------------------------------------------------------

/** The lines of an import file: its active facts, and how many lines it holds that are not imported. */
export function parseImportFile(ndjson: string): { facts: ExportedFact[]; skipped: number } {
  const facts: ExportedFact[] = [];
  let skipped = 0;
  ndjson.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new ValidationError(`Line ${index + 1} of the import file is not JSON.`);
    }
    const type = typeof value === 'object' && value !== null && 'type' in value ? value.type : undefined;
    if (type === 'summary') {
      skipped += 1;
      return;
    }
    const parsed = exportedFactSchema.safeParse(value);
    if (!parsed.success)
      throw new ValidationError(
        `Line ${index + 1} of the import file is not a fact or summary line of the export: ${parsed.error.issues[0]?.message ?? ''}`,
      );
    if (parsed.data.status === 'active') facts.push(parsed.data);
    else skipped += 1;
  });
  if (facts.length > MAX_IMPORT_FACTS)
    throw new ValidationError(`The import file holds more than ${MAX_IMPORT_FACTS} active facts.`);
  return { facts, skipped };
}

/**
 * Merges the facts (or statements) into the user's profile as a turn's would be: fact lines become additions with
 * their own words as evidence (no model call); statements go through the profile model first. New facts' ids and
 * each source come from the content, so the same import again only meets its own facts and writes nothing.
 */
export async function importMemory(
  services: MemoryTransferServices,
  userId: string,
  body: MemoryImportBody,
  options: { dryRun: boolean; scope?: MemoryScope | undefined },
): Promise<MemoryImportResult> {
  const now = (services.now?.() ?? new Date()).toISOString();
  const file = body.ndjson === undefined ? { facts: [], skipped: 0 } : parseImportFile(body.ndjson);
  // Each scope is merged on its own, as its conversations' turns are; every scope is checked before anything is written.
  const groups = new Map<MemoryScope, { statements?: string[]; facts: ExportedFact[] }>();
  if (body.statements !== undefined)
    groups.set(options.scope ?? USER_SCOPE, { statements: body.statements, facts: [] });
  for (const fact of file.facts) {
    const group = groups.get(fact.scope) ?? { facts: [] };
    group.facts.push(fact);
    groups.set(fact.scope, group);
  }
  for (const scope of groups.keys()) if (scope !== USER_SCOPE) await services.access?.(scope);
  const allActive = await services.facts.list(userId, { statuses: ['active'] });
  const result: MemoryImportResult = {
    dryRun: options.dryRun,
    changes: [],
    unchanged: 0,
    skipped: file.skipped,
    dropped: [],
  };
  for (const [scope, group] of groups) {
    const active = allActive.filter((fact) => inScopes(fact, [scope]));
    const userText = (group.statements ?? group.facts.map((fact) => fact.statement)).join('\n');
    const proposed: ProposedProfileChanges =
      group.statements === undefined
        ? {
            add: group.facts.map(({ category, statement }) => ({ category, statement, evidence: statement })),
            reaffirm: [],
            replace: [],
            retract: [],
          }
        : await proposeProfileChanges(services.llm, { userText, activeFacts: active });
    const merged = mergeProfileChanges({ active, userText, proposed, newFactId: (n) => `pending-${n}` });
    const byId = new Map(active.map((fact) => [fact.id, fact] as const));
    const validFrom = new Map(
      group.facts.map((fact) => [contentKey(fact.category, fact.statement), fact.validFrom]),
    );
    for (const decided of merged.changes) {
      const change = withContentIds(decided, scope);
      const about = aboutOf(change, byId);
      const source = importSource(about, validFrom.get(contentKey(about.category, about.statement)) ?? now);
      const wrote = await applyImported(
        services.facts,
        change,
        { userId, source, decidedAt: now, scope },
        options.dryRun,
      );
      if (wrote) result.changes.push({ ...shownChange(change), scope });
      else result.unchanged += 1;
    }
    result.dropped.push(...merged.dropped.map(shown));
  }
  return result;
}

/** Reads what a change writes, decides the writes and makes them on the versions read; true when any was needed. */
async function applyImported(
  facts: ProfileFacts,
  change: ProfileChange,
  context: { userId: string; source: FactSource; decidedAt: string; scope: MemoryScope },
  dryRun: boolean,
): Promise<boolean> {
  for (let attempt = 0; attempt < FACT_WRITE_ATTEMPTS; attempt++) {
    const stored = new Map<string, { fact: ProfileFact; version: string }>();
    for (const factId of factIdsOf(change)) {
      const found = await facts.get(context.userId, factId);
      if (found !== undefined) stored.set(factId, found);
    }
    const plain = new Map([...stored].map(([id, found]) => [id, found.fact] as const));
    const writes = applyChange(change, plain, context);
    if (writes.length === 0 || dryRun) return writes.length > 0;
    let conflict = false;
    for (const fact of writes)
      if ((await facts.put(fact, stored.get(fact.id)?.version)) === 'conflict') conflict = true;
    if (!conflict) return true;
  }
  throw new Error('The profile kept changing while the import wrote it; try the import again.');
}

/** New facts take their id from their content (and scope), so importing them again finds them. */
function withContentIds(change: ProfileChange, scope: MemoryScope): ProfileChange {
  if (change.op === 'add')
    return { ...change, factId: contentFactId(change.category, change.statement, scope) };
  if (change.op === 'replace')
    return { ...change, newFactId: contentFactId(change.category, change.statement, scope) };
  return change;
}

/** The statement a change is about: the one it brings, or the fact it names. */
function aboutOf(
  change: ProfileChange,
  active: ReadonlyMap<string, ProfileFact>,
): { category: ProfileCategory; statement: string } {
  if (change.op === 'add' || change.op === 'replace') return change;
  const fact = active.get(change.factId);
  return { category: fact?.category ?? 'knowledge', statement: fact?.statement ?? change.factId };
}

/** The import as a fact's source: one per statement, whenever and however often it is imported. */
function importSource(about: { category: ProfileCategory; statement: string }, at: string): FactSource {
  const chatMessageId = `import-${hash(contentKey(about.category, about.statement))}`;
  return { sessionId: IMPORT_SOURCE, chatMessageId, messageId: `${chatMessageId}_user`, at };
}

/** The same statement in two scopes is two facts; the shared memory's ids are those imports always had. */
export function contentFactId(
  category: ProfileCategory,
  statement: string,
  scope: MemoryScope = USER_SCOPE,
): string {
  const key = contentKey(category, statement);
  return `fact-${hash(scope === USER_SCOPE ? `import\u0000${key}` : `import\u0000${scope}\u0000${key}`)}`;
}

function contentKey(category: ProfileCategory, statement: string): string {
  const normal = statement.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
  return `${category}\u0000${normal.replace(/[\s.!;]+$/u, '')}`;
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

function shownChange(change: ProfileChange): Omit<MemoryImportResult['changes'][number], 'scope'> {
  switch (change.op) {
    case 'add':
      return { op: 'add', factId: change.factId, category: change.category, statement: change.statement };
    case 'replace':
      return {
        op: 'replace',
        factId: change.newFactId,
        category: change.category,
        statement: change.statement,
      };
    default:
      return { op: change.op, factId: change.factId };
  }
}

const shown = (dropped: DroppedChange) => ({ ...dropped });
