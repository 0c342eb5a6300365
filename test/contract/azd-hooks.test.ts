// The azd hooks' logic with scripted tools in place of az, azd and the network: the Graph body that gives the app
// registration what sign-in needs (merged with what it has, nothing when nothing is missing), the registration the
// preprovision hook finds or creates, and the postdeploy health wait.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  patchApplicationCommand,
  readApplicationCommand,
  registrationPatch,
  scopeIdFor,
  type GraphApplication,
  type GraphPatch,
} from '../../scripts/azd-hooks/app-registration.js';
import type { CommandResult } from '../../scripts/azd-hooks/command.js';
import { healthUrl, waitForHealth } from '../../scripts/azd-hooks/postdeploy.js';
import { configureSignIn, signInTargets } from '../../scripts/azd-hooks/postprovision.js';
import { ensureMcpSecretsKey, ensureRegistration } from '../../scripts/azd-hooks/preprovision.js';
import { readAzdProject } from '../support/azd-project.js';

const clientId = '3f1c2b9e-8a45-4c7d-9e21-6b0f4d2a7c55';
const targets = {
  clientId,
  webUri: 'https://icy-river-0a1b2c3d4.6.azurestaticapps.net',
  scope: 'user_impersonation',
};
const redirect = 'https://icy-river-0a1b2c3d4.6.azurestaticapps.net/';

/** What Graph would hold after the patch: Graph replaces each property the body names. */
const applied = (current: GraphApplication, patch: GraphPatch | undefined): GraphApplication => ({
  ...current,
  ...patch,
});

const answer = (stdout: string, status = 0, stderr = ''): CommandResult => ({
  status,
  stdout,
  stderr,
  missing: false,
});

describe('the scope id', () => {
  it('is a version 5 UUID of the scope name in the client id namespace, the same on every run', () => {
    // RFC 4122's name-based UUID of www.example.com in the DNS namespace.
    expect(scopeIdFor('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
    expect(scopeIdFor(clientId)).toBe(scopeIdFor(clientId));
    expect(scopeIdFor(clientId)).not.toBe(scopeIdFor('00000000-0000-4000-8000-000000000001'));
    expect(() => scopeIdFor('not-a-guid')).toThrow(/not a client id/);
  });
});

describe('the Graph body', () => {
  it('adds the redirect URI, the identifier URI and the scope to a bare registration', () => {
    const patch = registrationPatch({ appId: clientId }, targets);
    expect(patch).toEqual({
      spa: { redirectUris: [redirect] },
      identifierUris: [`api://${clientId}`],
      api: {
        oauth2PermissionScopes: [
          expect.objectContaining({
            id: scopeIdFor(clientId),
            value: 'user_impersonation',
            type: 'User',
            isEnabled: true,
          }),
        ],
      },
    });
  });

  it('keeps what the registration has, and the rest of spa and api, which Graph replaces whole', () => {
    const other = {
      ...registrationPatch({ appId: clientId }, { ...targets, scope: 'files.read' })!.api!
        .oauth2PermissionScopes![0]!,
    };
    const current: GraphApplication = {
      appId: clientId,
      identifierUris: ['https://contoso.example/chat'],
      spa: { redirectUris: ['http://localhost:7071/'] },
      api: { requestedAccessTokenVersion: 2, oauth2PermissionScopes: [other], preAuthorizedApplications: [] },
    };
    const patch = registrationPatch(current, targets)!;
    expect(patch.spa).toEqual({ redirectUris: ['http://localhost:7071/', redirect] });
    expect(patch.identifierUris).toEqual(['https://contoso.example/chat', `api://${clientId}`]);
    expect(patch.api).toMatchObject({ requestedAccessTokenVersion: 2, preAuthorizedApplications: [] });
    expect(patch.api!.oauth2PermissionScopes!.map((scope) => scope.value)).toEqual([
      'files.read',
      'user_impersonation',
    ]);
  });

  it('is nothing once applied, and adds only what is missing', () => {
    const first = registrationPatch({ appId: clientId }, targets);
    expect(registrationPatch(applied({ appId: clientId }, first), targets)).toBeUndefined();
    // A scope of that name made by hand (another id) counts: no twin.
    const byHand = applied({ appId: clientId }, first);
    byHand.api!.oauth2PermissionScopes![0]!.id = '11111111-1111-4111-8111-111111111111';
    byHand.spa = { redirectUris: [] };
    expect(registrationPatch(byHand, targets)).toEqual({ spa: { redirectUris: [redirect] } });
  });

  it('is read and written with az rest on the application by its client id', () => {
    const url = `https://graph.microsoft.com/v1.0/applications(appId='${clientId}')`;
    expect(readApplicationCommand(clientId)).toEqual(['az', 'rest', '--method', 'GET', '--uri', url]);
    expect(patchApplicationCommand(clientId, '/tmp/patch.json')).toEqual([
      'az',
      'rest',
      '--method',
      'PATCH',
      '--uri',
      url,
      '--headers',
      'Content-Type=application/json',
      '--body',
      '@/tmp/patch.json',
    ]);
  });
});

describe('the postprovision hook', () => {
  /** A scripted az: GET answers `current`, PATCH records its body (read while the file exists) and answers `patched`. */
  function scriptedAz(current: GraphApplication, patched: CommandResult = answer('')) {
    const bodies: unknown[] = [];
    const calls: string[][] = [];
    const run = (command: readonly string[]) => {
      calls.push([...command]);
      if (command.includes('GET')) return answer(JSON.stringify(current));
      bodies.push(JSON.parse(readFileSync(command.at(-1)!.slice(1), 'utf8')));
      return patched;
    };
    return { run, bodies, calls };
  }

  it('patches what is missing, then does nothing on the next run', () => {
    const az = scriptedAz({ appId: clientId, spa: { redirectUris: ['http://localhost:7071/'] } });
    const first = configureSignIn(targets, az.run);
    expect(first.ok).toBe(true);
    expect(first.message).toMatch(
      /redirect URI https:\/\/icy-river.*identifier URI.*delegated scope user_impersonation/,
    );
    expect(az.bodies).toEqual([
      registrationPatch({ appId: clientId, spa: { redirectUris: ['http://localhost:7071/'] } }, targets),
    ]);

    const again = scriptedAz(applied({ appId: clientId }, az.bodies[0] as GraphPatch));
    expect(configureSignIn(targets, again.run)).toMatchObject({
      ok: true,
      message: expect.stringMatching(/already has/),
    });
    expect(again.calls.map((call) => call[3])).toEqual(['GET']);
  });

  it('says whom to ask when Graph refuses, without failing', () => {
    const forbidden = answer(
      '',
      1,
      'ERROR: Forbidden({"error":{"code":"Authorization_RequestDenied","message":"Insufficient privileges to complete the operation."}})',
    );
    const result = configureSignIn(targets, scriptedAz({ appId: clientId }, forbidden).run);
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/may not change this app registration \(403\)/);
    expect(result.message).toMatch(/Application Administrator/);
    expect(result.message).toContain(redirect);
    expect(result.message).toMatch(/azd hooks run postprovision/);
  });

  it('explains a missing Azure CLI, and leaves sign-in alone without a web client', () => {
    const missing = () => ({ status: null, stdout: '', stderr: '', missing: true });
    expect(configureSignIn(targets, missing).message).toMatch(/Azure CLI \(az\) is not installed/);
    expect(signInTargets({ AUTH_CLIENT_ID: clientId })).toMatch(/SERVICE_WEB_URI is not set/);
    expect(signInTargets({ AUTH_CLIENT_ID: clientId, SERVICE_WEB_URI: targets.webUri })).toEqual(targets);
  });
});

describe('the preprovision hook', () => {
  function scripted(existing: string[]) {
    const calls: string[][] = [];
    const run = (command: readonly string[]) => {
      calls.push([...command]);
      if (command.includes('list')) return answer(JSON.stringify(existing));
      if (command.includes('create')) return answer(`${clientId}\n`);
      return answer('');
    };
    return { run, calls };
  }

  it('keeps a client id already set, and runs nothing', () => {
    const az = scripted([]);
    expect(ensureRegistration({ AUTH_CLIENT_ID: clientId }, az.run).clientId).toBe(clientId);
    expect(az.calls).toEqual([]);
  });

  it("creates the environment's registration once, and finds it the next time", () => {
    const first = scripted([]);
    expect(ensureRegistration({ AZURE_ENV_NAME: 'trial' }, first.run).clientId).toBe(clientId);
    expect(first.calls.map((call) => call.slice(0, 4).join(' '))).toEqual([
      'az ad app list',
      'az ad app create',
      'azd env set AUTH_CLIENT_ID',
    ]);
    expect(first.calls[2]).toEqual(['azd', 'env', 'set', 'AUTH_CLIENT_ID', clientId]);
    expect(first.calls[1]).toContain('memory-chat-api-trial');

    const next = scripted([clientId]);
    expect(ensureRegistration({ AZURE_ENV_NAME: 'trial' }, next.run).message).toMatch(/^Found/);
    expect(next.calls.some((call) => call.includes('create'))).toBe(false);
  });

  it('makes an MCP secrets key of 32 random bytes when none is set, and never replaces one', () => {
    const fresh = scripted([]);
    const made = ensureMcpSecretsKey({}, fresh.run, (size) => Buffer.alloc(size, 7));
    expect(made.created).toBe(true);
    expect(fresh.calls).toEqual([
      ['azd', 'env', 'set', 'MCP_SECRETS_KEY', Buffer.alloc(32, 7).toString('base64')],
    ]);
    expect(Buffer.from(fresh.calls[0]![4]!, 'base64')).toHaveLength(32);
    // The message names the setting, never the key.
    expect(made.message).not.toContain(fresh.calls[0]![4]!);

    const kept = scripted([]);
    expect(ensureMcpSecretsKey({ MCP_SECRETS_KEY: 'c2VjcmV0' }, kept.run).created).toBe(false);
    expect(kept.calls).toEqual([]);
  });

  it('says how to set the key by hand when azd cannot save it', () => {
    const failing = () => ({ status: 1, stdout: '', stderr: 'no environment selected', missing: false });
    const result = ensureMcpSecretsKey({}, failing);
    expect(result.created).toBe(false);
    expect(result.message).toMatch(/no environment selected.*azd env set MCP_SECRETS_KEY/s);
  });
});

describe('the postdeploy hook', () => {
  it('waits through a warming app until /api/health answers 200', async () => {
    const answers = [new Error('fetch failed'), 503, 200];
    const sleeps: number[] = [];
    const fetchScript = (() => {
      const next = answers.shift()!;
      if (next instanceof Error) return Promise.reject(next);
      return Promise.resolve(
        new Response(JSON.stringify({ status: next === 200 ? 'ok' : 'failing' }), { status: next }),
      );
    }) as typeof fetch;
    const result = await waitForHealth(
      'https://func.example.net/api/health',
      { attempts: 5, delayMs: 7, requestTimeoutMs: 1_000 },
      fetchScript,
      (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
    );
    expect(result).toMatchObject({ ok: true, attempts: 3 });
    expect(sleeps).toEqual([7, 7]);
  });

  it('gives up after its attempts with the last answer, and needs an https API URL', async () => {
    const unhealthy = (() =>
      Promise.resolve(new Response('{"failing":["cosmos"]}', { status: 503 }))) as typeof fetch;
    const result = await waitForHealth(
      'https://func.example.net/api/health',
      { attempts: 2, delayMs: 0, requestTimeoutMs: 1_000 },
      unhealthy,
      () => Promise.resolve(),
    );
    expect(result).toEqual({ ok: false, attempts: 2, last: 'HTTP 503: {"failing":["cosmos"]}' });
    const guarded = (() => Promise.resolve(new Response('', { status: 401 }))) as typeof fetch;
    const refused = await waitForHealth(
      'https://func.example.net/api/health',
      { attempts: 5, delayMs: 0, requestTimeoutMs: 1_000 },
      guarded,
      () => Promise.resolve(),
    );
    expect(refused).toEqual({ ok: false, attempts: 1, last: 'HTTP 401: ' });
    expect(healthUrl('https://func.example.net/')).toBe('https://func.example.net/api/health');
    expect(() => healthUrl(undefined)).toThrow(/SERVICE_API_URI is not set/);
  });
});

describe('azure.yaml', () => {
  it('runs each hook script with tsx on both shells, and every script exists', () => {
    const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
    const project = readAzdProject(path.join(repoRoot, 'azure.yaml'));
    const hooks = [
      ...Object.entries(project.hooks ?? {}),
      ...project.services.flatMap((service) => Object.entries(service.hooks ?? {})),
    ];
    expect(Object.keys(project.hooks ?? {}).sort()).toEqual(['postdeploy', 'postprovision', 'preprovision']);
    for (const [event, hook] of hooks) {
      const runs = [hook.posix?.run, hook.windows?.run];
      expect(new Set(runs).size, event).toBe(1);
      const script = /^npx tsx (\S+\.ts)$/.exec(runs[0] ?? '')?.[1];
      expect(script && existsSync(path.join(repoRoot, script)), `${event}: ${runs[0]}`).toBe(true);
    }
  });
});
