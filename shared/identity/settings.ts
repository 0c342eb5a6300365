// How callers are identified (AUTH_*), and the rule that decides which identities the app may trust where.
import {
  choiceSetting,
  defineSettings,
  textSetting,
  urlSetting,
  type SettingProblems,
  type SettingValues,
} from '../settings/setting.js';

export type AuthConfig =
  | { mode: 'app-service' }
  | { mode: 'dev' }
  | {
      mode: 'entra';
      tenantId: string;
      audiences: string[];
      issuer: string;
      jwksUrl: string;
      /** The delegated scope a user's token must carry (its `scp` claim) to call this API. */
      scope: string;
      /** The app role that makes an app-only token a service caller; undefined = no service callers. */
      serviceAppRole?: string;
    };

/** The delegated scope the README has the app registration expose (Azure's conventional name for it). */
export const DEFAULT_ENTRA_SCOPE = 'user_impersonation';
const CLAIM_WORD: [RegExp, string] = [
  /^[A-Za-z0-9._:/-]{1,120}$/,
  'must be one word of letters, digits, ".", "_", ":", "/" or "-"',
];

const derivedFromTenant = {
  kind: 'never',
  reason: 'Derived from AUTH_ENTRA_TENANT_ID; set it in the portal only for a non-public cloud.',
} as const;

export const identitySettings = defineSettings({
  AUTH_MODE: choiceSetting(['app-service', 'entra', 'dev'], {
    help:
      'How callers are identified: "app-service" (App Service authentication principal headers; requires ' +
      'authentication to be on), "entra" (validated Entra ID bearer tokens) or "dev" (local only: ' +
      'x-ms-client-principal-id of a dev user). Default: app-service in Azure, dev locally.',
    azure: { kind: 'bicep' },
  }),
  AUTH_ENTRA_TENANT_ID: textSetting({
    help: 'AUTH_MODE=entra: the tenant (directory) id tokens are issued by.',
    azure: { kind: 'bicep' },
  }),
  AUTH_ENTRA_AUDIENCE: textSetting({
    help: "AUTH_MODE=entra: accepted token audiences, comma-separated (the API app's client id and/or api://... URI).",
    azure: { kind: 'bicep' },
  }),
  AUTH_ENTRA_SCOPE: textSetting({
    help:
      "AUTH_MODE=entra: the delegated permission (scope) a user's token must carry in its scp claim; a token " +
      'without it (an app-only token, or one for another scope) is refused unless AUTH_SERVICE_APP_ROLE admits it.',
    default: DEFAULT_ENTRA_SCOPE,
    pattern: CLAIM_WORD,
    azure: { kind: 'default' },
  }),
  AUTH_SERVICE_APP_ROLE: textSetting({
    help:
      'AUTH_MODE=entra: the app role (roles claim) that admits an app-only token as a service caller, acting as ' +
      'its own object id (oid); empty = app-only tokens are refused.',
    pattern: CLAIM_WORD,
    azure: { kind: 'default' },
  }),
  AUTH_ENTRA_ISSUER: urlSetting({
    help: 'AUTH_MODE=entra: expected issuer; default https://login.microsoftonline.com/<tenant>/v2.0.',
    azure: derivedFromTenant,
  }),
  AUTH_ENTRA_JWKS_URL: urlSetting({
    help: 'AUTH_MODE=entra: signing keys; default https://login.microsoftonline.com/<tenant>/discovery/v2.0/keys.',
    azure: derivedFromTenant,
  }),
  WEBSITE_AUTH_ENABLED: textSetting({
    help: 'Set by App Service to "True" when its authentication is on; principal headers can only be trusted then.',
    applies: 'app',
    azure: { kind: 'platform' },
  }),
});

/** Which identities the app trusts. Principal headers are trusted only where the platform sets them. */
export function authConfig(
  values: SettingValues<typeof identitySettings>,
  env: 'local' | 'azure',
  problems: SettingProblems,
): AuthConfig | undefined {
  const mode = values.AUTH_MODE ?? (env === 'local' ? 'dev' : 'app-service');
  if (mode === 'dev') {
    if (env === 'azure') {
      problems.add('AUTH_MODE', '"dev" identities exist only in the local runtime');
      return undefined;
    }
    return { mode };
  }
  if (mode === 'app-service') {
    if (env === 'azure' && values.WEBSITE_AUTH_ENABLED?.toLowerCase() !== 'true') {
      problems.add(
        'AUTH_MODE',
        '"app-service" trusts the x-ms-client-principal headers, which only App Service authentication can vouch for, ' +
          'and it is off here (WEBSITE_AUTH_ENABLED is not True): turn it on, or use AUTH_MODE=entra',
      );
      return undefined;
    }
    return { mode };
  }
  const tenantId = values.AUTH_ENTRA_TENANT_ID;
  if (tenantId === undefined) problems.add('AUTH_ENTRA_TENANT_ID', 'missing (AUTH_MODE is entra)');
  const audiences = (values.AUTH_ENTRA_AUDIENCE ?? '')
    .split(',')
    .map((audience) => audience.trim())
    .filter((audience) => audience !== '');
  if (audiences.length === 0) problems.add('AUTH_ENTRA_AUDIENCE', 'missing (AUTH_MODE is entra)');
  if (tenantId === undefined || audiences.length === 0) return undefined;
  if (!/^[A-Za-z0-9.-]{1,100}$/.test(tenantId)) {
    problems.add('AUTH_ENTRA_TENANT_ID', 'must be a tenant id (GUID) or domain');
    return undefined;
  }
  return {
    mode,
    tenantId,
    audiences,
    issuer: values.AUTH_ENTRA_ISSUER ?? `https://login.microsoftonline.com/${tenantId}/v2.0`,
    jwksUrl:
      values.AUTH_ENTRA_JWKS_URL ?? `https://login.microsoftonline.com/${tenantId}/discovery/v2.0/keys`,
    scope: values.AUTH_ENTRA_SCOPE,
    ...(values.AUTH_SERVICE_APP_ROLE !== undefined ? { serviceAppRole: values.AUTH_SERVICE_APP_ROLE } : {}),
  };
}
