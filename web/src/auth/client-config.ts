// How this deployment identifies users, as GET /api/client-config tells the page: dev users locally, Entra ID
// sign-in (MSAL) or App Service authentication in Azure.
export interface DevUser {
  userId: string;
  name: string;
}

export interface ClientConfig {
  authMode: 'dev' | 'entra' | 'app-service';
  devUsers?: DevUser[];
  entra?: { clientId?: string; authority: string; scopes: string[] };
  appService?: { loginUrl: string; logoutUrl: string; meUrl: string };
}

/** Where the picked dev user is remembered between visits. */
export const DEV_USER_KEY = 'memory-chat.dev-user';

export async function loadClientConfig(base = '', fetchImpl: typeof fetch = fetch): Promise<ClientConfig> {
  const response = await fetchImpl(`${base}/api/client-config`, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`The sign-in settings did not load (${response.status}).`);
  const config = (await response.json()) as Partial<ClientConfig>;
  if (config.authMode !== 'dev' && config.authMode !== 'entra' && config.authMode !== 'app-service')
    throw new Error('The sign-in settings name no identity mode this page knows.');
  return config as ClientConfig;
}
