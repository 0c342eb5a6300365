// What the web client needs to know to sign its user in, served to anyone (nothing in it is a secret): the
// identity mode, and for each mode how to get an identity (the dev users, Entra ID's client and scope, or App
// Service's login URLs).
import { z } from 'zod';
import { DEV_USERS } from './dev-users.js';
import type { AuthConfig } from './settings.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const clientConfigSchema = z.object({
  authMode: z.enum(['dev', 'entra', 'app-service']),
  /** dev: the users the page may act as (the header x-ms-client-principal-id names one). */
  devUsers: z.array(z.object({ userId: z.string(), name: z.string() })).optional(),
  /** entra: what MSAL signs in with; clientId is absent when no audience names an app registration. */
  entra: z
    .object({
      clientId: z.string().optional(),
      authority: z.string(),
      scopes: z.array(z.string()),
    })
    .optional(),
  /** app-service: App Service authentication's own endpoints on this host. */
  appService: z.object({ loginUrl: z.string(), logoutUrl: z.string(), meUrl: z.string() }).optional(),
});
export type ClientConfig = z.infer<typeof clientConfigSchema>;

/**
 * The app registration a browser signs in with: the API's own (the first audience that is a client id, bare or as
 * `api://<client id>`), which then needs the page's URL as a single-page application redirect URI.
 */
function apiClientId(audiences: readonly string[]): string | undefined {
  for (const audience of audiences) {
    const id = audience.replace(/^api:\/\//i, '').replace(/\/+$/, '');
    if (GUID.test(id)) return id.toLowerCase();
  }
  return undefined;
}

/** The scope a user's token must carry, on the first audience: what the page asks Entra ID for. */
function apiScope(audiences: readonly string[], scope: string): string[] {
  const audience = audiences[0];
  if (audience === undefined) return [];
  const uri = /^[a-z][a-z0-9+.-]*:\/\//i.test(audience) ? audience : `api://${audience}`;
  return [`${uri.replace(/\/+$/, '')}/${scope}`];
}

export function clientConfig(auth: AuthConfig): ClientConfig {
  switch (auth.mode) {
    case 'dev':
      return {
        authMode: 'dev',
        devUsers: DEV_USERS.map(({ userId, name }) => ({ userId, name })),
      };
    case 'entra': {
      const clientId = apiClientId(auth.audiences);
      return {
        authMode: 'entra',
        entra: {
          ...(clientId === undefined ? {} : { clientId }),
          authority: `https://login.microsoftonline.com/${auth.tenantId}`,
          scopes: apiScope(auth.audiences, auth.scope),
        },
      };
    }
    case 'app-service':
      return {
        authMode: 'app-service',
        appService: { loginUrl: '/.auth/login/aad', logoutUrl: '/.auth/logout', meUrl: '/.auth/me' },
      };
  }
}
