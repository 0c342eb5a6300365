// The local runtime's Blob Storage: Microsoft's emulator (the npm package azurite) in a child process of its own,
// on a free loopback port, its data in the data folder (or in memory), reached with its well-known dev account.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';

/** Azurite's one account and its published key (the same in every copy of the emulator). */
const ACCOUNT = 'devstoreaccount1';
const ACCOUNT_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface LocalBlobOptions {
  host?: string;
  /** Where Azurite keeps its data; undefined keeps it in memory. */
  dataDir: string | undefined;
}

export interface LocalBlob {
  /** The account's endpoint, e.g. http://127.0.0.1:53123/devstoreaccount1. */
  endpoint: string;
  /** A connection string with the account key, for the SDK's clients. */
  connectionString: string;
  stop(): Promise<void>;
}

export async function startLocalBlob(options: LocalBlobOptions): Promise<LocalBlob> {
  const host = options.host ?? '127.0.0.1';
  const main = createRequire(import.meta.url).resolve('azurite/dist/src/blob/main.js');
  const args = [main, '--blobHost', host, '--blobPort', '0', '--silent', '--skipApiVersionCheck', '--loose'];
  args.push('--disableTelemetry');
  if (options.dataDir === undefined) args.push('--inMemoryPersistence');
  else {
    await mkdir(options.dataDir, { recursive: true });
    args.push('--location', options.dataDir);
  }
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
  const origin = await listening(child);
  const endpoint = `${origin}/${ACCOUNT}`;
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${ACCOUNT};AccountKey=${ACCOUNT_KEY};BlobEndpoint=${endpoint};`,
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      return stopping;
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
