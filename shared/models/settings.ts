// The model catalogue's setting (LLM_MODELS): the chat models conversations may choose, as JSON; unset, the one chat
// model the LLM connection names.
import { z } from 'zod';
import type { SettingRow } from '../settings/setting.js';
import { defineSettings, type SettingValues } from '../settings/setting.js';
import {
  catalogueOf,
  catalogueSchema,
  singleModelCatalogue,
  type CatalogueEntry,
  type ModelCatalogue,
} from './model-catalogue.js';

const EXAMPLE =
  '[{"id":"gpt-5.4-mini","label":"Fast","contextWindow":400000},' +
  '{"id":"gpt-5","label":"Deep","capabilities":{"reasoning":true},"allow":["group:<id>"]}]';

const modelsSchema: z.ZodType<CatalogueEntry[] | undefined, string | undefined> = z
  .string()
  .optional()
  .transform((text, context) => {
    if (text === undefined || text.trim() === '') return undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      context.addIssue({ code: 'custom', message: `must be JSON, e.g. ${EXAMPLE}` });
      return z.NEVER;
    }
    const parsed = catalogueSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
      context.addIssue({
        code: 'custom',
        message: `is not a model catalogue${where}: ${issue?.message ?? 'invalid'} (a list of models, e.g. ${EXAMPLE})`,
      });
      return z.NEVER;
    }
    const ids = parsed.data.map((entry) => entry.id);
    const twice = ids.find((id, index) => ids.indexOf(id) !== index);
    if (twice !== undefined) {
      context.addIssue({ code: 'custom', message: `lists model '${twice}' twice` });
      return z.NEVER;
    }
    return parsed.data;
  });

const modelsRow: SettingRow<CatalogueEntry[] | undefined> = {
  help:
    'The chat models conversations may choose, as JSON: a list of {id (the deployment or model name), label, ' +
    'capabilities {tools, vision, reasoning}, contextWindow, price (as in LLM_PRICES), allow (user ids and ' +
    '`group:<id>`; absent: everyone), deployment {model, version, sku, capacity} (Azure)}; the first is the ' +
    'default. Empty: the one chat model of the LLM connection.',
  sample: '',
  applies: 'app',
  azure: { kind: 'default' },
  defaultText: undefined,
  schema: modelsSchema,
};

export const modelSettings = defineSettings({ LLM_MODELS: modelsRow });

export function modelCatalogue(
  values: SettingValues<typeof modelSettings>,
  chatModel: string,
): ModelCatalogue {
  return values.LLM_MODELS === undefined ? singleModelCatalogue(chatModel) : catalogueOf(values.LLM_MODELS);
}
