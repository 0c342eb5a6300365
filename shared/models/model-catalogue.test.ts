import { describe, expect, it } from 'vitest';
import { ForbiddenError } from '../errors.js';
import {
  catalogueOf,
  catalogueSchema,
  chooseModel,
  modelsFor,
  singleModelCatalogue,
} from './model-catalogue.js';
import { modelCatalogue, modelSettings } from './settings.js';
import { readSettings, SettingProblems, settingsOf } from '../settings/setting.js';

const catalogue = catalogueOf(
  catalogueSchema.parse([{ id: 'fast' }, { id: 'deep', allow: ['user_001', 'group:researchers'] }]),
);

describe('the model catalogue', () => {
  it('chooses the asked model, else the conversation’s, else the default', () => {
    const caller = { userId: 'user_001' };
    expect(chooseModel(catalogue, caller, 'deep')).toBe('deep');
    expect(chooseModel(catalogue, caller, undefined, 'deep')).toBe('deep');
    expect(chooseModel(catalogue, caller, undefined)).toBe('fast');
  });

  it('refuses a model the caller may not use, or one not listed, naming it', () => {
    expect(() => chooseModel(catalogue, { userId: 'user_002' }, 'deep')).toThrow(ForbiddenError);
    expect(() => chooseModel(catalogue, { userId: 'user_002' }, 'deep')).toThrow(/'deep'/);
    expect(() => chooseModel(catalogue, { userId: 'user_001' }, 'other')).toThrow(/'other'/);
    expect(chooseModel(catalogue, { userId: 'user_002', groups: ['researchers'] }, 'deep')).toBe('deep');
    expect(modelsFor(catalogue, { userId: 'user_002' }).map((entry) => entry.id)).toEqual(['fast']);
  });

  it('reads LLM_MODELS, or falls back to the connection’s one model', () => {
    const read = (env: Record<string, string>) => {
      const problems = new SettingProblems(settingsOf(modelSettings));
      const values = readSettings(modelSettings, env, problems);
      return { problems, values };
    };
    expect(modelCatalogue(read({}).values, 'gpt-5.4-mini')).toEqual(singleModelCatalogue('gpt-5.4-mini'));
    const listed = modelCatalogue(read({ LLM_MODELS: '[{"id":"a"},{"id":"b:7b"}]' }).values, 'x');
    expect(listed.defaultModel).toBe('a');
    expect(listed.models.map((entry) => entry.id)).toEqual(['a', 'b:7b']);
    for (const bad of ['not json', '[]', '[{"id":"../x"}]', '[{"id":"a"},{"id":"a"}]']) {
      const { problems } = read({ LLM_MODELS: bad });
      expect(() => problems.throwIfAny(), bad).toThrow(/LLM_MODELS/);
    }
  });
});
