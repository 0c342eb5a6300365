// azd's preprovision hook: when AUTH_CLIENT_ID is unset, finds this environment's app registration by name or
// creates it with the Azure CLI, and keeps its client id in the azd environment (without the CLI, azd asks for it);
// when MCP_SECRETS_KEY is unset, makes one, so users can add MCP servers with API keys from the first deployment.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  classifyAzFailure,
  createRegistrationCommand,
  findRegistrationCommand,
  isClientId,
  registrationName,
} from './app-registration.js';
import { runCommand, type CommandResult } from './command.js';

export function setClientIdCommand(clientId: string): string[] {
  return ['azd', 'env', 'set', 'AUTH_CLIENT_ID', clientId];
}

/** The client id to use: the one already set, the one registration of that name, or a new one; else why not. */
export function ensureRegistration(
  env: NodeJS.ProcessEnv,
  run: (command: readonly string[]) => CommandResult = runCommand,
): { clientId?: string; message: string } {
  const current = env.AUTH_CLIENT_ID?.trim();
  if (isClientId(current)) return { clientId: current, message: `Using the app registration ${current}.` };
  const name = registrationName(env.AZURE_ENV_NAME);
  const unable = (result: CommandResult) =>
    `AUTH_CLIENT_ID is not set and the app registration ${name} could not be found or created ` +
    `(${classifyAzFailure(result) === 'missing' ? 'the Azure CLI is not installed' : result.stderr.trim()}). ` +
    'Create one (docs/deploy.md) and run `azd env set AUTH_CLIENT_ID <client id>`, or answer azd when it asks.';

  const found = run(findRegistrationCommand(name));
  if (found.status !== 0 || found.missing) return { message: unable(found) };
  const ids = (JSON.parse(found.stdout || '[]') as string[]).filter(isClientId);
  if (ids.length > 1)
    return {
      message: `${ids.length} app registrations are named ${name} (${ids.join(', ')}): run \`azd env set AUTH_CLIENT_ID <one of them>\`.`,
    };
  let clientId = ids[0];
  if (clientId === undefined) {
    const created = run(createRegistrationCommand(name));
    clientId = created.stdout.trim();
    if (created.status !== 0 || !isClientId(clientId)) return { message: unable(created) };
  }
  const saved = run(setClientIdCommand(clientId));
  if (saved.status !== 0)
    return { message: `Could not save AUTH_CLIENT_ID=${clientId}: ${saved.stderr.trim()}` };
  return {
    clientId,
    message: `${ids.length === 1 ? 'Found' : 'Created'} the app registration ${name} (${clientId}); AUTH_CLIENT_ID is set.`,
  };
}

/**
 * The key that seals MCP servers' header values (32 random bytes, base64): the one already set, else a new one kept
 * in the azd environment, from which provisioning puts it in Key Vault. A new key is made only when none is set:
 * replacing one would make every stored header value unreadable.
 */
export function ensureMcpSecretsKey(
  env: NodeJS.ProcessEnv,
  run: (command: readonly string[]) => CommandResult = runCommand,
  random: (size: number) => Buffer = randomBytes,
): { created: boolean; message: string } {
  if ((env.MCP_SECRETS_KEY ?? '').trim() !== '')
    return { created: false, message: 'Using the MCP secrets key already set.' };
  const saved = run(['azd', 'env', 'set', 'MCP_SECRETS_KEY', random(32).toString('base64')]);
  if (saved.status !== 0)
    return {
      created: false,
      message:
        `Could not save a new MCP_SECRETS_KEY (${saved.stderr.trim() || 'azd failed'}): users cannot add MCP ` +
        'servers with headers until one is set (`azd env set MCP_SECRETS_KEY "$(openssl rand -base64 32)"`).',
    };
  return {
    created: true,
    message: 'Made an MCP secrets key (MCP_SECRETS_KEY), kept in Key Vault on provisioning.',
  };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { clientId, message } = ensureRegistration(process.env);
  (clientId === undefined ? console.warn : console.log)(message);
  const key = ensureMcpSecretsKey(process.env);
  console.log(key.message);
}
