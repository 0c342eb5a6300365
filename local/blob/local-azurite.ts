// The local runtime's Blob Storage: Microsoft's emulator (the npm package azurite) in a child process of its own,
// on a free loopback port over HTTPS with its OAuth mode (user delegation keys need both), its data in the data
// folder (or in memory), reached with a local token and an agent that trusts its fresh certificate only.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AccessToken, TokenCredential } from '@azure/core-auth';
import { BlobServiceClient, newPipeline, type RequestPolicyFactory } from '@azure/storage-blob';
import { createSelfSignedCertificate, loopbackAltNames } from '../cosmos/self-signed-certificate.js';

/** Azurite's one account. */
const ACCOUNT = 'devstoreaccount1';

export interface LocalBlobOptions {
  host?: string;
  /** Where Azurite keeps its data; undefined keeps it in memory. */
  dataDir: string | undefined;
}

export interface LocalBlob {
  /** The account's endpoint, e.g. https://127.0.0.1:53123/devstoreaccount1. */
  endpoint: string;
  /** Signs in as a local user: Azurite's OAuth mode checks a token's issuer, audience and lifetime, not its signature. */
  credential: TokenCredential;
  /** Trusts this emulator's certificate, and only it. */
  agent: Agent;
  /** The certificate, for a client (a browser in a test) that has to trust it. */
  certPem: string;
  /** The emulator's process (it exits with this one, even when this one is killed). */
  pid: number | undefined;
  /** A service client of the real SDK, signed in and trusting the emulator. */
  serviceClient(): BlobServiceClient;
  /** The origins that may call the Blob API from a page (the page's direct uploads). */
  allowOrigins(origins: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalBlob(options: LocalBlobOptions): Promise<LocalBlob> {
  const host = options.host ?? '127.0.0.1';
  const certificate = await createSelfSignedCertificate({
    subjectAltNames: loopbackAltNames(host),
    commonName: 'Local Blob Storage',
  });
  // Azurite reads its certificate and key from files: they live in a folder of their own, gone once it is up.
  const keys = await mkdtemp(join(tmpdir(), 'local-blob-'));
  const main = createRequire(import.meta.url).resolve('azurite/dist/src/blob/main.js');
  const args = ['-e', exitingWithParent(main), '--', '--blobHost', host, '--blobPort', '0', '--silent'];
  args.push('--skipApiVersionCheck', '--loose');
  args.push('--disableTelemetry', '--oauth', 'basic');
  args.push('--cert', join(keys, 'cert.pem'), '--key', join(keys, 'key.pem'));
  if (options.dataDir === undefined) args.push('--inMemoryPersistence');
  else {
    await mkdir(options.dataDir, { recursive: true });
    args.push('--location', options.dataDir);
  }
  let origin: string;
  let child: ChildProcess;
  try {
    await writeFile(join(keys, 'cert.pem'), certificate.certPem, { mode: 0o600 });
    await writeFile(join(keys, 'key.pem'), certificate.keyPem, { mode: 0o600 });
    // Its stdin is a pipe only this process holds: it ends when this process does, however it ends.
    child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env: childEnv() });
    origin = await listening(child);
  } finally {
    await rm(keys, { recursive: true, force: true });
  }
  const endpoint = `${origin}/${ACCOUNT}`;
  const agent = new Agent({ ca: certificate.certPem, keepAlive: true });
  const credential = localTokenCredential();
  const serviceClient = () => trustingServiceClient(endpoint, credential, agent);
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    credential,
    agent,
    certPem: certificate.certPem,
    pid: child.pid,
    serviceClient,
    async allowOrigins(origins) {
      const service = serviceClient();
      await service.setProperties({
        cors: [
          {
            allowedOrigins: origins.join(','),
            allowedMethods: 'PUT,OPTIONS',
            allowedHeaders: 'content-type,x-ms-blob-type,x-ms-version,x-ms-client-request-id',
            exposedHeaders: 'etag,x-ms-request-id',
            maxAgeInSeconds: 3600,
          },
        ],
      });
    },
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        agent.destroy();
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      return stopping;
    },
  };
}

/**
 * The script that runs Azurite's entry as if it were started itself, and exits when its stdin ends: the runtime
 * holds the other end, so a runtime that is killed (SIGKILL, a crash) leaves no emulator behind on its port.
 */
function exitingWithParent(main: string): string {
  const entry = JSON.stringify(main);
  return [
    "process.stdin.on('end', () => process.exit(0));",
    // Unreferenced: it must not keep Azurite up once a SIGTERM has closed its server.
    'process.stdin.resume(); process.stdin.unref();',
    `process.argv.splice(1, 0, ${entry});`,
    `require(${entry});`,
  ].join(' ');
}

/** A service client of the real SDK whose every request goes through `agent` (the SDK takes no CA of its own). */
export function trustingServiceClient(
  endpoint: string,
  credential: TokenCredential,
  agent: Agent,
): BlobServiceClient {
  const pipeline = newPipeline(credential);
  const trust: RequestPolicyFactory = {
    create: (next) => ({
      sendRequest(request) {
        request.agent = agent;
        return next.sendRequest(request);
      },
    }),
  };
  pipeline.factories.push(trust);
  return new BlobServiceClient(endpoint, pipeline);
}

/**
 * Tokens of one local user for Azurite's `--oauth basic`, which reads a token's claims (issuer, audience, lifetime,
 * object and tenant ids for user delegation keys) and checks no signature: an unsigned JWT is enough, and it works
 * nowhere else.
 */
function localTokenCredential(): TokenCredential {
  const tenant = randomUUID();
  const user = randomUUID();
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    getToken(): Promise<AccessToken> {
      const now = Math.floor(Date.now() / 1000);
      const expires = now + 3600;
      const claims = {
        iss: `https://sts.windows.net/${tenant}/`,
        aud: 'https://storage.azure.com',
        iat: now - 60,
        nbf: now - 60,
        exp: expires,
        oid: user,
        tid: tenant,
        sub: user,
      };
      const token = `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`;
      return Promise.resolve({ token, expiresOnTimestamp: expires * 1000 });
    },
  };
}

/** Waits for Azurite's "listens on <url>" line; its other output is dropped (its errors are kept for the failure). */
function listening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /successfully listens on (https?:\/\/\S+)/.exec(output);
      if (match?.[1] === undefined) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      child.off('exit', onExit);
      resolve(match[1].replace(/\/$/, ''));
    };
    const onExit = (code: number | null) =>
      reject(new Error(`Azurite (local Blob Storage) exited (${code}) as it started: ${output.trim()}`));
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('exit', onExit);
    child.once('error', reject);
  });
}

/** The emulator needs nothing of the app's environment (its secrets least of all). */
function childEnv(): NodeJS.ProcessEnv {
  const { PATH, HOME, TMPDIR, SYSTEMROOT } = process.env;
  return Object.fromEntries(
    Object.entries({ PATH, HOME, TMPDIR, SYSTEMROOT }).filter(([, value]) => value !== undefined),
  );
}
