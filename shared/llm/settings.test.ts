// LLM_API and LLM_REASONING_EFFORT: Chat Completions and no reasoning options unless asked, for every provider.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../app/config.js';
import type { ConfigError } from '../settings/setting.js';

const azure = {
  APP_ENV: 'azure',
  COSMOS_ENDPOINT: 'https://acct.documents.azure.com:443/',
  ServiceBusConnection__fullyQualifiedNamespace: 'ns.servicebus.windows.net',
  WEBPUBSUB_ENDPOINT: 'https://wps.webpubsub.azure.com',
  WEBSITE_AUTH_ENABLED: 'True',
  LLM_PROVIDER: 'azure-openai',
  AZURE_OPENAI_ENDPOINT: 'https://aoai.openai.azure.com',
  AZURE_OPENAI_CHAT_DEPLOYMENT: 'gpt-5-mini',
  AZURE_OPENAI_EMBEDDING_DEPLOYMENT: 'text-embedding-3-small',
};
const ollama = {
  ...azure,
  LLM_PROVIDER: 'openai-compatible',
  LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
  LLM_CHAT_MODEL: 'gpt-oss',
  LLM_EMBEDDING_MODEL: 'nomic-embed-text',
};

describe('LLM_API and LLM_REASONING_EFFORT', () => {
  it('default to Chat Completions without reasoning options, blank included', () => {
    for (const connection of [
      loadConfig(azure).llm.connection,
      loadConfig({ ...ollama, LLM_API: '', LLM_REASONING_EFFORT: ' ' }).llm.connection,
    ]) {
      expect(connection.api).toBe('chat-completions');
      expect(connection).not.toHaveProperty('reasoningEffort');
    }
  });

  it('choose the Responses API and a reasoning effort for any provider', () => {
    for (const env of [azure, ollama])
      expect(
        loadConfig({ ...env, LLM_API: 'responses', LLM_REASONING_EFFORT: 'low' }).llm.connection,
      ).toMatchObject({ api: 'responses', reasoningEffort: 'low' });
    expect(loadConfig({ ...ollama, LLM_API: 'responses' }).llm.connection).not.toHaveProperty(
      'reasoningSummary',
    );
    expect(
      loadConfig({
        ...ollama,
        LLM_API: 'responses',
        LLM_REASONING_EFFORT: 'low',
        LLM_REASONING_SUMMARY: 'off',
      }).llm.connection,
    ).toMatchObject({ reasoningEffort: 'low', reasoningSummary: 'off' });
  });

  it('name the setting when its value is not one they know', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (error) {
        return (error as ConfigError).problems.map((problem) => [problem.setting, problem.problem]);
      }
    };
    expect(problems({ ...azure, LLM_API: 'assistants', LLM_REASONING_EFFORT: 'extreme' })).toEqual([
      ['LLM_API', 'must be "chat-completions" or "responses"'],
      ['LLM_REASONING_EFFORT', 'must be "none", "minimal", "low", "medium", "high" or "xhigh"'],
    ]);
  });
});
