// The model catalogue: the chat models a conversation may run on (LLM_MODELS), who may use each, and the choice of
// one for a turn. Pure: the catalogue is parsed once from the settings and read by the front door and GET /api/models.
import { z } from 'zod';
import { ForbiddenError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { idPatternSchema } from '../ids.js';

/** US dollars per million tokens, as the price table (LLM_PRICES) keeps them. */
const perMillion = z.number().min(0).max(100_000);
const cataloguePriceSchema = z.strictObject({
  input: perMillion,
  cachedInput: perMillion.optional(),
  output: perMillion.optional(),
  reasoning: perMillion.optional(),
});

export const modelCapabilitiesSchema = z.strictObject({
  tools: z.boolean().default(true),
  vision: z.boolean().default(false),
  reasoning: z.boolean().default(false),
});

export const catalogueEntrySchema = z.strictObject({
  id: idPatternSchema('modelId'),
  label: z.string().min(1).max(100).optional(),
  capabilities: modelCapabilitiesSchema.default({ tools: true, vision: false, reasoning: false }),
  /** Tokens the model reads at most (prompt and answer). */
  contextWindow: z.number().int().positive().max(10_000_000).optional(),
  /** US dollars per million tokens: feeds the price table (LLM_PRICES) for this model. */
  price: cataloguePriceSchema.optional(),
  /**
   * Who may use it: user ids and `group:<id>` entries (an Entra ID group in the caller's `groups` claim). Absent:
   * everyone. For Azure, the deployment's SKU and capacity for the Bicep.
   */
  allow: z.array(z.string().min(1).max(200)).max(200).optional(),
  deployment: z
    .strictObject({
      model: z.string().min(1).max(100),
      version: z.string().min(1).max(40),
      sku: z.string().min(1).max(40).default('GlobalStandard'),
      capacity: z.number().int().positive().max(100_000).default(10),
    })
    .optional(),
});
export type CatalogueEntry = z.infer<typeof catalogueEntrySchema>;

export const catalogueSchema = z.array(catalogueEntrySchema).min(1).max(50);

/** The catalogue: its models in the order listed; the first is the default. */
export interface ModelCatalogue {
  models: readonly CatalogueEntry[];
  defaultModel: string;
  /** Listed by LLM_MODELS (each entry's capabilities are its own); absent: the connection's one model. */
  listed?: true;
}

/** A catalogue of one model, the chat model the connection names (what a deployment without LLM_MODELS runs). */
export function singleModelCatalogue(chatModel: string): ModelCatalogue {
  return {
    models: [{ id: chatModel, capabilities: { tools: true, vision: false, reasoning: false } }],
    defaultModel: chatModel,
  };
}

export function catalogueOf(entries: readonly CatalogueEntry[]): ModelCatalogue {
  const [first] = entries;
  if (first === undefined) throw new Error('A model catalogue needs at least one model.');
  return { models: entries, defaultModel: first.id, listed: true };
}

/** Whether the caller may use this entry. */
export function mayUse(entry: CatalogueEntry, caller: Pick<Caller, 'userId' | 'groups'>): boolean {
  if (entry.allow === undefined) return true;
  return entry.allow.some((who) =>
    who.startsWith('group:')
      ? (caller.groups ?? []).includes(who.slice('group:'.length))
      : who === caller.userId,
  );
}

/** The models the caller may use, in the catalogue's order. */
export function modelsFor(
  catalogue: ModelCatalogue,
  caller: Pick<Caller, 'userId' | 'groups'>,
): CatalogueEntry[] {
  return catalogue.models.filter((entry) => mayUse(entry, caller));
}

/**
 * The model a turn or a conversation runs on: the one asked for, else the fallback (the conversation's), else the
 * catalogue's default. One the catalogue does not list, or the caller may not use, is a 403 naming it.
 */
export function chooseModel(
  catalogue: ModelCatalogue,
  caller: Pick<Caller, 'userId' | 'groups'>,
  requested: string | undefined,
  fallback?: string,
): string {
  const id = requested ?? fallback ?? catalogue.defaultModel;
  const entry = catalogue.models.find((model) => model.id === id);
  if (entry === undefined || !mayUse(entry, caller))
    throw new ForbiddenError(
      `Model '${id}' is not one this caller may use: choose one GET /api/models lists.`,
    );
  return entry.id;
}

/** A model as GET /api/models shows it. */
export function describeModel(entry: CatalogueEntry, defaultModel: string) {
  return {
    id: entry.id,
    label: entry.label ?? entry.id,
    capabilities: entry.capabilities,
    ...(entry.contextWindow !== undefined ? { contextWindow: entry.contextWindow } : {}),
    ...(entry.price !== undefined ? { price: entry.price } : {}),
    default: entry.id === defaultModel,
  };
}
