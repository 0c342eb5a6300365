// Entra ID sign-in with MSAL (redirect flow): the account signed in, and an identity whose headers carry an
// access token for this API, renewed silently (or by a redirect when Entra ID asks the user again).
import type { AccountInfo, IPublicClientApplication } from '@azure/msal-browser';
import type { Identity } from './identity';

export interface EntraSettings {
  clientId: string;
  authority: string;
  scopes: string[];
}

export interface EntraSession {
  /** The signed-in user, or undefined. */
  identity: Identity | undefined;
  name: string | undefined;
  signIn(): Promise<void>;
  signOut(): Promise<void>;
}

/** Loaded only in Entra ID mode, so the dev page never downloads MSAL. */
export async function startEntraSession(settings: EntraSettings): Promise<EntraSession> {
  const msal = await import('@azure/msal-browser');
  // The one redirect URI the deployment registers is the site's root; MSAL returns from there to the page that
  // started the sign-in (a conversation's address, a share link), so a deep link signs in too.
  const redirectUri = `${window.location.origin}/`;
  const client = await msal.createStandardPublicClientApplication({
    auth: { clientId: settings.clientId, authority: settings.authority, redirectUri },
    // Tokens live as long as the tab: nothing for another site's script to find in localStorage later.
    cache: { cacheLocation: 'sessionStorage' },
  });
  const result = await client.handleRedirectPromise();
  const account = result?.account ?? client.getActiveAccount() ?? client.getAllAccounts()[0];
  if (account !== undefined && account !== null) client.setActiveAccount(account);
  const signedIn = account ?? undefined;
  return {
    identity:
      signedIn === undefined
        ? undefined
        : entraIdentity(
            client,
            signedIn,
            settings.scopes,
            (error) => error instanceof msal.InteractionRequiredAuthError,
          ),
    name: signedIn?.name ?? signedIn?.username,
    signIn: () => client.loginRedirect({ scopes: settings.scopes }),
    signOut: () =>
      client.logoutRedirect({
        ...(signedIn === undefined ? {} : { account: signedIn }),
        postLogoutRedirectUri: redirectUri,
      }),
  };
}

function entraIdentity(
  client: IPublicClientApplication,
  account: AccountInfo,
  scopes: string[],
  /** Whether Entra ID needs the user again (consent, an expired session): then a redirect asks them. */
  needsInteraction: (error: unknown) => boolean,
): Identity {
  // The API names users by their object id (the token's oid), which MSAL keeps as the local account id.
  const objectId =
    typeof account.idTokenClaims?.oid === 'string' ? account.idTokenClaims.oid : account.localAccountId;
  return {
    userId: objectId,
    async headers() {
      try {
        const token = await client.acquireTokenSilent({ scopes, account });
        return { authorization: `Bearer ${token.accessToken}` };
      } catch (error) {
        if (needsInteraction(error)) {
          await client.acquireTokenRedirect({ scopes, account });
          return {};
        }
        throw error;
      }
    },
  };
}
