// What the app registration needs for sign-in right after `azd up`, as Microsoft Graph changes: the web client's
// URL as a single-page-application redirect URI, the identifier URI api://<client id> and the delegated scope.
// Pure: the hooks (preprovision.ts, postprovision.ts) run the commands these functions build.
import { createHash } from 'node:crypto';

export const DEFAULT_SCOPE = 'user_impersonation';

export interface PermissionScope {
  id: string;
  value: string;
  type: 'User' | 'Admin';
  isEnabled: boolean;
  adminConsentDisplayName: string;
  adminConsentDescription: string;
  userConsentDisplayName?: string;
  userConsentDescription?: string;
}

/** The part of Graph's application resource the hook reads and writes; other properties are left as they are. */
export interface GraphApplication {
  appId: string;
  displayName?: string;
  identifierUris?: string[];
  spa?: { redirectUris?: string[] } & Record<string, unknown>;
  api?: { oauth2PermissionScopes?: PermissionScope[] } & Record<string, unknown>;
}

export interface SignInTargets {
  clientId: string;
  /** The web client's origin (SERVICE_WEB_URI); the page signs in from its root, `<origin>/`. */
  webUri: string;
  scope: string;
}

export type GraphPatch = Partial<Pick<GraphApplication, 'identifierUris' | 'spa' | 'api'>>;

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isClientId(value: string | undefined): value is string {
  return value !== undefined && GUID.test(value.trim());
}

/**
 * The scope's id: a name-based UUID (version 5) of the scope's name in the client id's namespace, so every run and
 * every machine proposes the same id for the same registration, and a second run never adds a twin.
 */
export function scopeIdFor(clientId: string, scope = DEFAULT_SCOPE): string {
  if (!isClientId(clientId)) throw new Error(`"${String(clientId)}" is not a client id (a GUID).`);
  const namespace = Buffer.from(clientId.replaceAll('-', ''), 'hex');
  const bytes = createHash('sha1').update(namespace).update(scope, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The redirect URI the page uses when it signs in from its root: its origin and a slash. */
export function spaRedirectUri(webUri: string): string {
  const url = new URL(webUri);
  if (url.protocol !== 'https:') throw new Error(`SERVICE_WEB_URI must be https, not "${webUri}".`);
  return `${url.origin}/`;
}

/**
 * The Graph PATCH body that adds what is missing, keeping every existing redirect URI, identifier URI and scope
 * (and the rest of `spa` and `api`, which Graph replaces as a whole); undefined when nothing is missing.
 */
export function registrationPatch(current: GraphApplication, targets: SignInTargets): GraphPatch | undefined {
  const patch: GraphPatch = {};
  const redirect = spaRedirectUri(targets.webUri);
  const redirects = current.spa?.redirectUris ?? [];
  if (!redirects.includes(redirect)) patch.spa = { ...current.spa, redirectUris: [...redirects, redirect] };

  const identifierUri = `api://${targets.clientId}`;
  const identifierUris = current.identifierUris ?? [];
  if (!identifierUris.includes(identifierUri)) patch.identifierUris = [...identifierUris, identifierUri];

  const scopes = current.api?.oauth2PermissionScopes ?? [];
  const id = scopeIdFor(targets.clientId, targets.scope);
  if (!scopes.some((scope) => scope.value === targets.scope || scope.id === id))
    patch.api = { ...current.api, oauth2PermissionScopes: [...scopes, permissionScope(id, targets.scope)] };

  return Object.keys(patch).length === 0 ? undefined : patch;
}

function permissionScope(id: string, value: string): PermissionScope {
  return {
    id,
    value,
    type: 'User',
    isEnabled: true,
    adminConsentDisplayName: 'Use the chat API as the signed-in user',
    adminConsentDescription: 'Lets the web client call the chat API on behalf of the signed-in user.',
    userConsentDisplayName: 'Use the chat API as you',
    userConsentDescription: 'Lets the web client call the chat API on your behalf.',
  };
}

/** What a patch changes, in words, for the hook's output. */
export function describePatch(patch: GraphPatch, targets: SignInTargets): string[] {
  const changes: string[] = [];
  if (patch.spa) changes.push(`single-page-application redirect URI ${spaRedirectUri(targets.webUri)}`);
  if (patch.identifierUris) changes.push(`identifier URI api://${targets.clientId}`);
  if (patch.api) changes.push(`delegated scope ${targets.scope}`);
  return changes;
}

/** Graph's address of an application by its client id (an alternate key of the resource). */
export function applicationUrl(clientId: string): string {
  if (!isClientId(clientId)) throw new Error(`"${String(clientId)}" is not a client id (a GUID).`);
  return `https://graph.microsoft.com/v1.0/applications(appId='${clientId.trim()}')`;
}

export function readApplicationCommand(clientId: string): string[] {
  return ['az', 'rest', '--method', 'GET', '--uri', applicationUrl(clientId)];
}

export function patchApplicationCommand(clientId: string, bodyFile: string): string[] {
  return [
    'az',
    'rest',
    '--method',
    'PATCH',
    '--uri',
    applicationUrl(clientId),
    '--headers',
    'Content-Type=application/json',
    '--body',
    `@${bodyFile}`,
  ];
}

/** The display name of the registration the preprovision hook creates for an azd environment. */
export function registrationName(environmentName: string | undefined): string {
  return `memory-chat-api-${environmentName?.trim() || 'default'}`;
}

export function findRegistrationCommand(name: string): string[] {
  return ['az', 'ad', 'app', 'list', '--display-name', name, '--query', '[].appId', '-o', 'json'];
}

export function createRegistrationCommand(name: string): string[] {
  return [
    'az',
    'ad',
    'app',
    'create',
    '--display-name',
    name,
    '--sign-in-audience',
    'AzureADMyOrg',
    '--query',
    'appId',
    '-o',
    'tsv',
  ];
}

export type AzFailure = 'missing' | 'forbidden' | 'signed-out' | 'not-found' | 'other';

/** Why an `az` command failed, from its exit and what it printed. */
export function classifyAzFailure(result: { missing: boolean; stderr: string }): AzFailure {
  if (result.missing) return 'missing';
  const text = result.stderr;
  if (/Forbidden|Authorization_RequestDenied|Insufficient privileges/i.test(text)) return 'forbidden';
  if (/az login|not logged in|AADSTS\d+/i.test(text)) return 'signed-out';
  if (/Request_ResourceNotFound|Not Found|does not exist/i.test(text)) return 'not-found';
  return 'other';
}
