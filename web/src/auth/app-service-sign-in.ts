// App Service authentication: the platform signs the user in (its /.auth/login/aad) and adds the principal
// headers to every same-origin request by its cookie, so the page sends no header of its own.
import type { Identity } from './identity';

interface MeEntry {
  user_id?: string;
  user_claims?: { typ: string; val: string }[];
}

const OBJECT_ID_CLAIMS = ['http://schemas.microsoft.com/identity/claims/objectidentifier', 'oid'];

export interface AppServiceUser {
  identity: Identity;
  name: string;
}

/** The signed-in user from /.auth/me, or undefined when nobody is (401, or an empty list). */
export async function appServiceUser(
  meUrl: string,
  fetchImpl: typeof fetch = fetch,
): Promise<AppServiceUser | undefined> {
  const response = await fetchImpl(meUrl, {
    credentials: 'same-origin',
    headers: { accept: 'application/json' },
  });
  if (response.status === 401 || response.status === 404) return undefined;
  if (!response.ok) throw new Error(`App Service authentication did not answer (${response.status}).`);
  const entries = (await response.json()) as MeEntry[];
  const entry = entries[0];
  if (entry === undefined) return undefined;
  const claims = entry.user_claims ?? [];
  const claim = (types: string[]) => claims.find((candidate) => types.includes(candidate.typ))?.val;
  // The API reads the same object id from the principal headers the platform sets.
  const userId = claim(OBJECT_ID_CLAIMS) ?? entry.user_id;
  if (userId === undefined) return undefined;
  return {
    identity: { userId, headers: () => Promise.resolve({}) },
    name: claim(['name', 'preferred_username']) ?? entry.user_id ?? userId,
  };
}

/** The platform's login URL, coming back to this page. */
export function appServiceLoginUrl(loginUrl: string): string {
  return `${loginUrl}?post_login_redirect_uri=${encodeURIComponent(window.location.pathname + window.location.search)}`;
}

export function appServiceLogoutUrl(logoutUrl: string): string {
  return `${logoutUrl}?post_logout_redirect_uri=${encodeURIComponent(window.location.pathname)}`;
}
