// The model catalogue's setting (LLM_MODELS): the chat models conversations may choose, as JSON; unset, the one chat
// model the LLM connection names.
import { z } from 'zod';
import type { SettingRow } from '../settings/setting.js';
import { defineSettings, parseJsonSetting, type SettingValues } from '../settings/setting.js';
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
    const entries = parseJsonSetting(text, catalogueSchema, context, {
      what: 'a model catalogue',
      hint: `a list of models, e.g. ${EXAMPLE}`,
      example: EXAMPLE,
    });
    if (entries === undefined) return z.NEVER;
    const ids = entries.map((entry) => entry.id);
    const twice = ids.find((id, index) => ids.indexOf(id) !== index);
    if (twice !== undefined) {
      context.addIssue({ code: 'custom', message: `lists model '${twice}' twice` });
      return z.NEVER;
    }
    return entries;
  });

const modelsRow: SettingRow<CatalogueEntry[] | undefined> = {
  help:
    'The chat models conversations may choose, as JSON: a list of {id (the deployment or model name), label, ' +
    'capabilities {tools, vision, reasoning}, contextWindow, price (as in LLM_PRICES), allow (user ids and ' +
    '`group:<id>`; absent: everyone), deployment {model, version, sku, capacity} (Azure)}; the first is the ' +
    'default. Empty: the one chat model of the LLM connection.',
  sample: '',
  applies: 'app',
  azure: { kind: 'bicep' },
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
