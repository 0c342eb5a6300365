// Personal API keys: the caller creates one (answered this once), lists theirs and revokes one. A key then acts as
// its owner on the OpenAI-compatible API and MCP; it is never answered, logged or traced after its creation.
import { z } from 'zod';
import {
  apiKeyListSchema,
  createApiKeyBodySchema,
  createdApiKeySchema,
} from '../shared/api-keys/contracts.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../shared/api-keys/api-keys.js';
import { apiKeyIdSchema } from '../shared/ids.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

export const API_KEYS_ROUTE = 'api-keys';

/**
 * The paths of every route that takes a personal API key, as App Service authentication's excludedPaths name them
 * (infra/modules/function-app.bicep): with keys on, Easy Auth leaves these to the app.
 */
export const API_KEY_PATHS = ['/api/v1/*', '/api/mcp'] as const;

export const createApiKeyEndpoint = endpoint({
  name: 'createApiKey',
  route: API_KEYS_ROUTE,
  methods: ['POST'],
  summary:
    'Creates a personal API key {name, expiresAt?} for the OpenAI-compatible API and MCP: the answer holds the key itself, the only time it is shown.',
  auth: 'caller',
  responses: {
    201: '{id, name, prefix, createdAt, lastUsedAt, expiresAt, key}: keep `key`, it is never shown again',
    403: 'API keys are turned off on this service (API_KEYS=off)',
    409: 'the caller holds API_KEYS_MAX_PER_USER unexpired keys already: revoke one first',
  },
  replies: { 201: createdApiKeySchema },
  body: { schema: createApiKeyBodySchema, maxBytes: 2 * 1024, what: 'API key' },
  async handle({ app, caller, body }) {
    const created = await createApiKey(app.apiKeys.services, caller, body);
    return { status: 201, body: created, headers: { 'cache-control': 'no-store' } };
  },
});

export const listApiKeysEndpoint = endpoint({
  name: 'listApiKeys',
  route: API_KEYS_ROUTE,
  methods: ['GET'],
  summary:
    "The caller's personal API keys, newest first: name, prefix, when created, last used and expiring; never the key.",
  auth: 'caller',
  responses: { 200: '{keys: [{id, name, prefix, createdAt, lastUsedAt, expiresAt}], enabled, maxKeys}' },
  replies: { 200: apiKeyListSchema },
  async handle({ app, caller }) {
    const keys = await listApiKeys(app.apiKeys.services, caller);
    const { enabled, maxPerUser } = app.config.apiKeys;
    return { status: 200, body: { keys, enabled, maxKeys: maxPerUser } };
  },
});

export const revokeApiKeyEndpoint = endpoint({
  name: 'revokeApiKey',
  route: `${API_KEYS_ROUTE}/{id}`,
  methods: ['DELETE'],
  summary:
    "Revokes one of the caller's API keys: refused at once on this instance, and on every instance within API_KEYS_CACHE_SECONDS.",
  auth: 'caller',
  responses: { 204: 'revoked', 404: "an unknown key, or another user's" },
  params: z.object({ id: apiKeyIdSchema }),
  async handle({ app, caller, params }) {
    await revokeApiKey(app.apiKeys.services, caller, params.id);
    return { status: 204 };
  },
});

export const apiKeyFunctions: FunctionDefinition[] = [
  httpFunction(createApiKeyEndpoint),
  httpFunction(listApiKeysEndpoint),
  httpFunction(revokeApiKeyEndpoint),
];
