// The operator's settings of personal API keys: whether users may make them, how many each may hold, and how long
// an instance trusts a key it checked (the longest a revoked key can still work).
import { choiceSetting, defineSettings, intSetting, type SettingValues } from '../settings/setting.js';

export const apiKeySettings = defineSettings({
  API_KEYS: choiceSetting(['on', 'off'], {
    help:
      '"on" lets users create personal API keys (settings, or POST /api/api-keys) for the OpenAI-compatible API ' +
      '(/api/v1) and MCP (/api/mcp); "off" refuses every key and hides the settings section. Default: on locally, ' +
      'off in Azure (a key skips the sign-in and its conditional access, so an operator turns keys on knowingly).',
    azure: { kind: 'bicep' },
  }),
  API_KEYS_MAX_PER_USER: intSetting({
    default: 10,
    min: 1,
    max: 100,
    help: 'How many unexpired personal API keys one user may hold; creating one more answers 409 naming the limit.',
    azure: { kind: 'bicep' },
  }),
  API_KEYS_CACHE_SECONDS: intSetting({
    default: 5,
    min: 1,
    max: 60,
    help:
      'An instance trusts a key it checked for this many seconds before reading it again: a revoked key stops ' +
      'working on every instance within this time.',
    azure: { kind: 'default' },
  }),
});

export interface ApiKeysConfig {
  enabled: boolean;
  maxPerUser: number;
  cacheMs: number;
}

export function apiKeysConfig(
  values: SettingValues<typeof apiKeySettings>,
  env: 'local' | 'azure',
): ApiKeysConfig {
  return {
    enabled: (values.API_KEYS ?? (env === 'local' ? 'on' : 'off')) === 'on',
    maxPerUser: values.API_KEYS_MAX_PER_USER,
    cacheMs: values.API_KEYS_CACHE_SECONDS * 1000,
  };
}
