import { describe, expect, it } from 'vitest';
import type { EntraAuthConfig } from './entra-token.js';
import { bearerChallenge, entraScopes, protectedResourceMetadata } from './protected-resource.js';

const CLIENT_ID = '3fa85f64-5717-4562-b3fc-2c963f66afa6';
const entra = (audiences: string[]): EntraAuthConfig => ({
  mode: 'entra',
  tenantId: 'contoso.onmicrosoft.com',
  audiences,
  issuer: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0',
  jwksUrl: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/discovery/v2.0/keys',
  scope: 'user_impersonation',
});

describe('entraScopes', () => {
  it('asks for the .default scope of each application ID URI, a bare client id standing for api://<id>', () => {
    expect(entraScopes(entra([`api://${CLIENT_ID}`, CLIENT_ID]))).toEqual([`api://${CLIENT_ID}/.default`]);
    expect(entraScopes(entra(['https://contoso.com/memory/', CLIENT_ID]))).toEqual([
      'https://contoso.com/memory/.default',
      `api://${CLIENT_ID}/.default`,
    ]);
  });
});

describe('protectedResourceMetadata', () => {
  it("names the resource, the tenant's issuer, the scopes and header bearer tokens", () => {
    expect(protectedResourceMetadata(entra([CLIENT_ID]), 'https://app.example/api/mcp')).toEqual({
      resource: 'https://app.example/api/mcp',
      authorization_servers: ['https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0'],
      scopes_supported: [`api://${CLIENT_ID}/.default`],
      bearer_methods_supported: ['header'],
      resource_name: 'Long-term memory (MCP)',
    });
  });
});

describe('bearerChallenge', () => {
  const url = 'https://app.example/api/oauth-protected-resource/mcp';

  it('names only the metadata when no token was presented (RFC 6750 §3.1)', () => {
    expect(bearerChallenge(url)).toBe(`Bearer resource_metadata="${url}"`);
  });

  it('adds invalid_token and a reason that cannot break out of its quotes', () => {
    expect(bearerChallenge(url, { description: 'The "token" \\ expired\n— sign in again' })).toBe(
      `Bearer resource_metadata="${url}", error="invalid_token", error_description="The 'token' ' expired   sign in again"`,
    );
  });
});
