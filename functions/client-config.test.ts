// GET /api/client-config in process, in each identity mode: what a browser needs to sign in, and nothing secret.
import { describe, expect, it } from 'vitest';
import { DEV_USERS } from '../shared/identity/dev-users.js';
import { clientConfigSchema } from '../shared/identity/client-config.js';
import { callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp } from '../test/support/in-memory-ports.js';
import { clientConfigEndpoint } from './client-config.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const API_CLIENT_ID = '3fa85f64-5717-4562-b3fc-2c963f66afa6';

async function configIn(settings: Record<string, string>) {
  const reply = await callEndpoint(clientConfigEndpoint, createTestApp({ settings }));
  expect(reply.status).toBe(200);
  expect(reply.headers.get('cache-control')).toBe('public, max-age=300');
  return clientConfigSchema.parse(await reply.json());
}

describe('GET /api/client-config', () => {
  it('lists the dev users in dev mode, with no identity needed to ask', async () => {
    const config = await configIn({ AUTH_MODE: 'dev' });
    expect(config).toEqual({
      authMode: 'dev',
      devUsers: DEV_USERS.map(({ userId, name }) => ({ userId, name })),
    });
  });

  it("gives MSAL the API's client id, the tenant's authority and the delegated scope in Entra ID mode", async () => {
    const config = await configIn({
      AUTH_MODE: 'entra',
      AUTH_ENTRA_TENANT_ID: TENANT,
      AUTH_ENTRA_AUDIENCE: `api://${API_CLIENT_ID.toUpperCase()}`,
    });
    expect(config).toEqual({
      authMode: 'entra',
      entra: {
        clientId: API_CLIENT_ID,
        authority: `https://login.microsoftonline.com/${TENANT}`,
        scopes: [`api://${API_CLIENT_ID.toUpperCase()}/user_impersonation`],
      },
    });
    expect(config.devUsers).toBeUndefined();
  });

  it('asks for the configured scope on a bare client id audience, and leaves clientId out when none is a GUID', async () => {
    const bare = await configIn({
      AUTH_MODE: 'entra',
      AUTH_ENTRA_TENANT_ID: TENANT,
      AUTH_ENTRA_AUDIENCE: API_CLIENT_ID,
      AUTH_ENTRA_SCOPE: 'chat.use',
    });
    expect(bare.entra).toMatchObject({
      clientId: API_CLIENT_ID,
      scopes: [`api://${API_CLIENT_ID}/chat.use`],
    });
    const named = await configIn({
      AUTH_MODE: 'entra',
      AUTH_ENTRA_TENANT_ID: TENANT,
      AUTH_ENTRA_AUDIENCE: 'https://chat.contoso.com/api',
    });
    expect(named.entra).toEqual({
      authority: `https://login.microsoftonline.com/${TENANT}`,
      scopes: ['https://chat.contoso.com/api/user_impersonation'],
    });
  });

  it("points at App Service authentication's own endpoints in app-service mode", async () => {
    const config = await configIn({ AUTH_MODE: 'app-service' });
    expect(config).toEqual({
      authMode: 'app-service',
      appService: { loginUrl: '/.auth/login/aad', logoutUrl: '/.auth/logout', meUrl: '/.auth/me' },
    });
  });
});
