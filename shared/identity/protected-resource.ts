// OAuth 2.0 Protected Resource Metadata (RFC 9728) for Entra ID mode, which MCP clients read to learn where
// to get a token, and the 401's challenge that points at it. Pure: the URLs come from the caller.
import { z } from 'zod';
import type { EntraAuthConfig } from './entra-token.js';

/** RFC 9728 §2, the members this API publishes. */
export const protectedResourceMetadataSchema = z.object({
  /** The protected resource's identifier: the MCP endpoint's URL. */
  resource: z.string(),
  /** The issuers of tokens it accepts: the Entra ID tenant's. */
  authorization_servers: z.array(z.string()),
  scopes_supported: z.array(z.string()),
  bearer_methods_supported: z.tuple([z.literal('header')]),
  resource_name: z.string(),
});
export type ProtectedResourceMetadata = z.infer<typeof protectedResourceMetadataSchema>;

/**
 * The scopes a client asks Entra ID for to call this API: `<application ID URI>/.default` (every delegated
 * permission the app exposes and the user consented to), for each accepted audience. A bare client id audience
 * stands for its default application ID URI, api://<client id>.
 */
export function entraScopes(auth: EntraAuthConfig): string[] {
  const scopes = auth.audiences.map((audience) => {
    const uri = /^[a-z][a-z0-9+.-]*:\/\//i.test(audience) ? audience : `api://${audience}`;
    return `${uri.replace(/\/+$/, '')}/.default`;
  });
  return [...new Set(scopes)];
}

export function protectedResourceMetadata(
  auth: EntraAuthConfig,
  resource: string,
): ProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [auth.issuer],
    scopes_supported: entraScopes(auth),
    bearer_methods_supported: ['header'],
    resource_name: 'Long-term memory (MCP)',
  };
}

/**
 * The challenge of a 401 (RFC 6750 §3, RFC 9728 §5.1). A request that carried no token gets no error code (RFC 6750
 * §3.1); one whose token was refused gets invalid_token with the reason.
 */
export function bearerChallenge(resourceMetadataUrl: string, refused?: { description: string }): string {
  const parts = [`resource_metadata="${quoted(resourceMetadataUrl)}"`];
  if (refused !== undefined)
    parts.push('error="invalid_token"', `error_description="${quoted(refused.description)}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** A quoted-string's content in a header: printable ASCII only, no quote or backslash to end or break it. */
function quoted(text: string): string {
  return text.replace(/[\\"]/g, "'").replace(/[^\x20-\x7e]/g, ' ');
}
