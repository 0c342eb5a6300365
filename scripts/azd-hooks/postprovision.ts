// azd's postprovision hook: gives the app registration what sign-in needs (app-registration.ts) through Microsoft
// Graph with the Azure CLI's sign-in, reading first and changing only what is missing. By hand:
// `azd hooks run postprovision`. A registration the user may not change is reported, not fatal.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  classifyAzFailure,
  DEFAULT_SCOPE,
  describePatch,
  isClientId,
  patchApplicationCommand,
  readApplicationCommand,
  registrationPatch,
  scopeIdFor,
  spaRedirectUri,
  type GraphApplication,
  type SignInTargets,
} from './app-registration.js';
import { runCommand, type CommandResult } from './command.js';

/** The targets from azd's environment, or why there are none (nothing to configure is not an error). */
export function signInTargets(env: NodeJS.ProcessEnv): SignInTargets | string {
  const clientId = env.AUTH_CLIENT_ID?.trim();
  const webUri = env.SERVICE_WEB_URI?.trim();
  if (!isClientId(clientId)) return 'AUTH_CLIENT_ID is not a client id (a GUID)';
  if (webUri === undefined || webUri === '')
    return 'SERVICE_WEB_URI is not set (no web client was provisioned)';
  return { clientId, webUri, scope: env.AUTH_ENTRA_SCOPE?.trim() || DEFAULT_SCOPE };
}

/** What to ask for when the signed-in user may not change the registration, or the CLI cannot do it. */
export function manualSteps(targets: SignInTargets): string {
  return [
    `In the Azure portal, App registrations → the application ${targets.clientId}:`,
    `  - Authentication → Add a platform → Single-page application → redirect URI ${spaRedirectUri(targets.webUri)}`,
    `  - Expose an API → Application ID URI api://${targets.clientId}, and a scope named ${targets.scope}` +
      ` (id ${scopeIdFor(targets.clientId, targets.scope)}, who can consent: admins and users)`,
    'Or ask one of its owners, or an admin with the Application Administrator or Cloud Application Administrator',
    `role, to make you an owner (az ad app owner add --id ${targets.clientId} --owner-object-id <your object id>),`,
    'then run `azd hooks run postprovision`.',
  ].join('\n');
}

function explain(step: string, result: CommandResult, targets: SignInTargets): string {
  const why = {
    missing: 'the Azure CLI (az) is not installed',
    forbidden: 'Microsoft Graph refused: the signed-in user may not change this app registration (403)',
    'signed-out': 'the Azure CLI is not signed in (run `az login`, with the tenant of the registration)',
    'not-found': `no app registration has the client id ${targets.clientId} in the Azure CLI's tenant`,
    other: `az failed (exit ${String(result.status)}): ${result.stderr.trim()}`,
  }[classifyAzFailure(result)];
  return `Sign-in is not configured yet: ${step} failed because ${why}.\n${manualSteps(targets)}`;
}

/** Reads the registration, patches what is missing; returns what it did, in words. */
export function configureSignIn(
  targets: SignInTargets,
  run: (command: readonly string[]) => CommandResult = runCommand,
): { ok: boolean; message: string } {
  const read = run(readApplicationCommand(targets.clientId));
  if (read.status !== 0 || read.missing) return { ok: false, message: explain('reading it', read, targets) };
  const patch = registrationPatch(JSON.parse(read.stdout) as GraphApplication, targets);
  if (patch === undefined)
    return { ok: true, message: `The app registration ${targets.clientId} already has what sign-in needs.` };
  const folder = mkdtempSync(path.join(tmpdir(), 'app-registration-'));
  try {
    const body = path.join(folder, 'patch.json');
    writeFileSync(body, JSON.stringify(patch));
    const written = run(patchApplicationCommand(targets.clientId, body));
    if (written.status !== 0 || written.missing)
      return { ok: false, message: explain('changing it', written, targets) };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  return {
    ok: true,
    message: `The app registration ${targets.clientId} now has: ${describePatch(patch, targets).join(', ')}.`,
  };
}

function main(): void {
  const targets = signInTargets(process.env);
  if (typeof targets === 'string') {
    console.log(`Sign-in left as it is: ${targets}.`);
    return;
  }
  const { ok, message } = configureSignIn(targets);
  // The deployment goes on either way: the app runs, and sign-in works once the registration has these.
  (ok ? console.log : console.warn)(message);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
