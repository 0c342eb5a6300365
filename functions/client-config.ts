// GET /api/client-config: how the web client signs its user in here (identity mode, dev users, Entra ID's client
// and scope, App Service's login URLs), for anyone: it holds no secret.
import { clientConfig, clientConfigSchema } from '../shared/identity/client-config.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

export const clientConfigEndpoint = endpoint({
  name: 'clientConfig',
  route: 'client-config',
  methods: ['GET'],
  summary:
    "How a web client signs in here: {authMode} and, by mode, the dev users (dev), MSAL's clientId, authority and scopes (entra), or App Service's login URLs (app-service). No secrets.",
  auth: 'anonymous',
  responses: { 200: '{authMode, devUsers? | entra? | appService?}' },
  replies: { 200: clientConfigSchema },
  handle({ app }) {
    return Promise.resolve({
      status: 200,
      body: clientConfig(app.config.auth),
      // The same for every caller until the deployment's settings change: a page may keep it a few minutes.
      headers: { 'cache-control': 'public, max-age=300' },
    });
  },
});

export const clientConfigFunctions: FunctionDefinition[] = [httpFunction(clientConfigEndpoint)];
