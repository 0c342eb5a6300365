import { describe, expect, it } from 'vitest';
import { ConfigError } from '../settings/setting.js';
import { loadConfig } from './config.js';

const azure = {
  APP_ENV: 'azure',
  AZURE_CLIENT_ID: '00000000-0000-0000-0000-000000000001',
  COSMOS_ENDPOINT: 'https://acct.documents.azure.com:443/',
  ServiceBusConnection__fullyQualifiedNamespace: 'ns.servicebus.windows.net',
  WEBPUBSUB_ENDPOINT: 'https://wps.webpubsub.azure.com',
  LLM_PROVIDER: 'azure-openai',
  AZURE_OPENAI_ENDPOINT: 'https://aoai.openai.azure.com',
  AZURE_OPENAI_CHAT_DEPLOYMENT: 'gpt-4o-mini',
  AZURE_OPENAI_EMBEDDING_DEPLOYMENT: 'text-embedding-3-small',
  WEBSITE_AUTH_ENABLED: 'True',
};

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems.map((p) => p.setting);
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('parses a complete Azure configuration with identity-based connections', () => {
    const config = loadConfig(azure);
    expect(config.env).toBe('azure');
    expect(config.cosmos).toEqual({ endpoint: azure.COSMOS_ENDPOINT, databaseId: 'chat', key: undefined });
    expect(config.llm.connection).toMatchObject({
      kind: 'azure-openai',
      chatDeployment: 'gpt-4o-mini',
      apiKey: undefined,
      managedIdentityClientId: azure.AZURE_CLIENT_ID,
    });
    expect(config.llm.maxRetries).toBe(3);
  });

  it('names every missing setting at once', () => {
    expect(problemsOf({ APP_ENV: 'azure', LLM_PROVIDER: 'azure-openai' })).toEqual([
      'COSMOS_ENDPOINT',
      'ServiceBusConnection__fullyQualifiedNamespace',
      'WEBPUBSUB_ENDPOINT',
      'AUTH_MODE',
      'AZURE_OPENAI_ENDPOINT',
      'AZURE_OPENAI_CHAT_DEPLOYMENT',
      'AZURE_OPENAI_EMBEDDING_DEPLOYMENT',
    ]);
  });

  it('trusts principal headers only behind App Service authentication, and dev identities only locally', () => {
    expect(loadConfig(azure).auth).toEqual({ mode: 'app-service' });
    expect(problemsOf({ ...azure, WEBSITE_AUTH_ENABLED: undefined })).toEqual(['AUTH_MODE']);
    expect(problemsOf({ ...azure, WEBSITE_AUTH_ENABLED: 'False' })).toEqual(['AUTH_MODE']);
    expect(problemsOf({ ...azure, AUTH_MODE: 'dev' })).toEqual(['AUTH_MODE']);
    expect(problemsOf({ ...azure, AUTH_MODE: 'anonymous' })).toEqual(['AUTH_MODE']);
  });

  it('validates Entra ID tokens against the tenant and the listed audiences', () => {
    expect(problemsOf({ ...azure, AUTH_MODE: 'entra' })).toEqual([
      'AUTH_ENTRA_TENANT_ID',
      'AUTH_ENTRA_AUDIENCE',
    ]);
    const config = loadConfig({
      ...azure,
      WEBSITE_AUTH_ENABLED: undefined,
      AUTH_MODE: 'entra',
      AUTH_ENTRA_TENANT_ID: 'contoso.onmicrosoft.com',
      AUTH_ENTRA_AUDIENCE: ' api://chat , 11111111-2222-3333-4444-555555555555 ',
    });
    expect(config.auth).toEqual({
      mode: 'entra',
      tenantId: 'contoso.onmicrosoft.com',
      audiences: ['api://chat', '11111111-2222-3333-4444-555555555555'],
      issuer: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0',
      jwksUrl: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/discovery/v2.0/keys',
      scope: 'user_impersonation',
    });
  });

  it('reads the chat and streaming limits, with documented defaults', () => {
    const config = loadConfig(azure);
    expect(config.chat).toEqual({
      maxTextChars: 8000,
      maxToolRounds: 10,
      promptTokenBudget: 16000,
      maxOutputTokens: 4096,
      turnWaitMs: 600000,
      firstRound: 'worker',
      cancelPollMs: 1000,
      profileTimeoutMs: 2000,
      temporaryChatTtlSeconds: 86_400,
    });
    expect(config.streaming).toEqual({
      flushIntervalMs: 50,
      flushMaxChars: 256,
      sseIdleTimeoutMs: 120000,
      sseStartTimeoutMs: 30000,
      streamsPerUser: 20,
      ticketTtlSeconds: 900,
    });
    expect(config.searchesPerMinute).toBe(0);
    expect(loadConfig({ ...azure, STREAMS_PER_USER: '0' }).streaming.streamsPerUser).toBe(0);
    expect(problemsOf({ ...azure, SSE_START_TIMEOUT_MS: '10', QUOTA_SEARCHES_PER_MINUTE: '-1' })).toEqual([
      'SSE_START_TIMEOUT_MS',
      'QUOTA_SEARCHES_PER_MINUTE',
    ]);
    expect(problemsOf({ ...azure, CHAT_PROMPT_TOKEN_BUDGET: '10', STREAM_FLUSH_MAX_CHARS: '0' })).toEqual([
      'CHAT_PROMPT_TOKEN_BUDGET',
      'STREAM_FLUSH_MAX_CHARS',
    ]);
    expect(loadConfig({ ...azure, MEMORY_PROFILE_TIMEOUT_MS: '500' }).chat.profileTimeoutMs).toBe(500);
    expect(problemsOf({ ...azure, MEMORY_PROFILE_TIMEOUT_MS: '0' })).toEqual(['MEMORY_PROFILE_TIMEOUT_MS']);
    expect(loadConfig({ ...azure, CHAT_CANCEL_POLL_MS: '250' }).chat.cancelPollMs).toBe(250);
    expect(problemsOf({ ...azure, CHAT_CANCEL_POLL_MS: '10' })).toEqual(['CHAT_CANCEL_POLL_MS']);
  });

  it('keeps the hot store in Cosmos DB unless HOT_STORE names Redis', () => {
    expect(loadConfig(azure).hotStore).toEqual({ kind: 'cosmos' });
    const managed = { ...azure, HOT_STORE: 'redis', REDIS_HOST_NAME: 'chat.westeurope.redis.azure.net' };
    expect(loadConfig(managed).hotStore).toEqual({ kind: 'redis' });
    expect(loadConfig(managed).redis.connection).toEqual({
      kind: 'azure-managed',
      hostName: 'chat.westeurope.redis.azure.net',
      managedIdentityClientId: azure.AZURE_CLIENT_ID,
    });
    // Redis with nowhere to reach it, or by a URL (a password) in Azure, stops start-up.
    expect(problemsOf({ ...azure, HOT_STORE: 'redis' })).toEqual(['HOT_STORE']);
    expect(problemsOf({ ...managed, REDIS_URL: 'rediss://:secret@cache:6380' })).toEqual(['REDIS_URL']);
    expect(problemsOf({ ...managed, REDIS_HOST_NAME: 'not a host' })).toEqual(['REDIS_HOST_NAME']);
    expect(problemsOf({ ...azure, HOT_STORE: 'memcached' })).toEqual(['HOT_STORE']);
  });

  it('explains how to fix a setting in the message', () => {
    expect(() => loadConfig({ ...azure, COSMOS_ENDPOINT: undefined })).toThrow(
      /COSMOS_ENDPOINT: missing \(Cosmos DB holds sessions and history\)\. Cosmos DB account endpoint, e\.g\. https:/,
    );
  });

  it('reads the quotas, off by default, and refuses a turn lease shorter than the worker follows a turn', () => {
    expect(loadConfig(azure).quota).toMatchObject({
      concurrentTurns: 0,
      messagesPerMinute: 0,
      leaseSeconds: 900,
    });
    const limited = { ...azure, QUOTA_CONCURRENT_TURNS: '3', CHAT_TURN_WAIT_MS: '600000' };
    expect(loadConfig({ ...limited, QUOTA_TURN_LEASE_SECONDS: '600' }).quota.concurrentTurns).toBe(3);
    expect(problemsOf({ ...limited, QUOTA_TURN_LEASE_SECONDS: '599' })).toEqual(['QUOTA_TURN_LEASE_SECONDS']);
    // Without the limit no lease is taken: nothing to check.
    expect(loadConfig({ ...azure, QUOTA_TURN_LEASE_SECONDS: '60' }).quota.leaseSeconds).toBe(60);
  });

  it('rejects malformed values, naming the setting', () => {
    expect(problemsOf({ ...azure, APP_ENV: 'prod' })).toEqual(['APP_ENV']);
    expect(problemsOf({ ...azure, COSMOS_ENDPOINT: 'not a url' })).toEqual(['COSMOS_ENDPOINT']);
    expect(problemsOf({ ...azure, LLM_MAX_RETRIES: 'three' })).toEqual(['LLM_MAX_RETRIES']);
    expect(problemsOf({ ...azure, LLM_PROVIDER: 'gpt' })).toEqual(['LLM_PROVIDER']);
    expect(problemsOf({ ...azure, WEBPUBSUB_HUB: '1-bad' })).toEqual(['WEBPUBSUB_HUB']);
  });

  it('refuses keys in Azure and the offline model outside the local runtime', () => {
    expect(problemsOf({ ...azure, COSMOS_KEY: 'abc' })).toEqual(['COSMOS_KEY']);
    expect(problemsOf({ ...azure, WEBPUBSUB_CONNECTION_STRING: 'Endpoint=x' })).toEqual([
      'WEBPUBSUB_CONNECTION_STRING',
    ]);
    expect(problemsOf({ ...azure, LLM_PROVIDER: 'offline' })).toContain('LLM_PROVIDER');
  });

  it('requires the base URL and models of an OpenAI-compatible endpoint', () => {
    expect(problemsOf({ ...azure, LLM_PROVIDER: 'openai-compatible' })).toEqual([
      'LLM_BASE_URL',
      'LLM_CHAT_MODEL',
      'LLM_EMBEDDING_MODEL',
    ]);
    const config = loadConfig({
      ...azure,
      LLM_PROVIDER: 'openai-compatible',
      LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
      LLM_CHAT_MODEL: 'qwen2.5',
      LLM_EMBEDDING_MODEL: 'nomic-embed-text',
    });
    expect(config.llm.connection).toEqual({
      api: 'chat-completions',
      kind: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      chatModel: 'qwen2.5',
      embeddingModel: 'nomic-embed-text',
    });
  });

  it('treats empty strings as unset, as app settings often are', () => {
    expect(loadConfig({ ...azure, AZURE_OPENAI_API_KEY: '', LLM_TIMEOUT_MS: '' }).llm.timeoutMs).toBe(60_000);
  });
});
