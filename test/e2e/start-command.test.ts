// The compiled entry points as Node runs them outside vitest: `npm start` starts, serves and stops cleanly,
// bad settings and a taken port stop it with a clear message, and the Functions host entry registers.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatClient } from '../support/chat-client.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const startEntry = join(root, 'dist/local/start.js');
const functionsEntry = join(root, 'dist/functions/index.js');

/** `npm run build`, so the test runs what `npm start` and the Functions host run. */
function build(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`build failed:\n${result.stdout}${result.stderr}`);
}

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function run(cwd: string, env: Record<string, string>, args: string[] = [startEntry]): Run {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Waits for a line on stdout; fails at once, with the process's stderr, if it exits first. */
async function waitForOutput(started: Run, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  let exitCode: number | null | undefined;
  void started.exited.then((code) => (exitCode = code));
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(started.stdout())) {
    if (exitCode !== undefined)
      throw new Error(`exited with ${exitCode} before ${pattern}:\n${started.stderr()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${started.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function portIsFree(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Reads the turn's SSE stream until its answer has begun (its first content event), then lets it go. */
async function firstContent(client: ChatClient, sessionId: string, chatMessageId: string): Promise<void> {
  const response = await client.openStream(sessionId, chatMessageId);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('"type":"content"')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before any answer text:\n${text}`);
    text += decoder.decode(value as Uint8Array | undefined, { stream: true });
  }
  await reader.cancel();
}

describe('the compiled entry points', () => {
  let cwd: string;
  // A full tsc build: minutes on a machine shared with other work, so its hook has a budget of its own.
  beforeAll(async () => {
    build();
    cwd = await mkdtemp(join(tmpdir(), 'chat-start-'));
  }, 600_000);
  afterAll(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  it('prints one line when ready, serves a healthy API and stops cleanly', async () => {
    const started = run(cwd, { PORT: '0', LOCAL_DATA_DIR: join(cwd, 'data') });
    try {
      await waitForOutput(started, /listening on/);
      const lines = started.stdout().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /offline model \(a deterministic stand-in, not a real LLM\) via chat-completions/,
      );
      const url = /listening on (http:\/\/localhost:\d+)\/api/.exec(lines[0]!)?.[1];
      expect(url).toBeDefined();
      const health = await fetch(`${url!.replace('localhost', '127.0.0.1')}/api/health`);
      expect(health.status).toBe(200);

      // A second runtime on the same data folder would overwrite its files: it is refused.
      const second = run(cwd, { PORT: '0', LOCAL_DATA_DIR: join(cwd, 'data') });
      expect(await second.exited).toBe(1);
      expect(second.stderr()).toMatch(/is in use by another local runtime \(process \d+\)/);

      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
    } finally {
      started.child.kill('SIGKILL');
    }
  });

  it('names Azure-like latency in its banner and health, and on Ctrl+C mid-answer stops, frees the port and resumes the turn', async () => {
    const port = await freePort();
    // A slow model, so the answer is still being written when Ctrl+C comes.
    const env = {
      PORT: String(port),
      LOCAL_DATA_DIR: join(cwd, 'latency-data'),
      LOCAL_AZURE_LATENCY: 'azure',
      OFFLINE_MODEL_TOKENS_PER_SECOND: '4',
    };
    const base = `http://127.0.0.1:${port}`;
    const client = new ChatClient(base, 'user_001');
    const first = run(cwd, env);
    let sessionId: string;
    let chatMessageId: string;
    try {
      await waitForOutput(first, /Latency: LOCAL_AZURE_LATENCY=azure/);
      const health = (await (await fetch(`${base}/api/health`)).json()) as {
        dependencies: Record<string, { detail?: string }>;
      };
      expect(health.dependencies['localLatency']?.detail).toMatch(
        /^LOCAL_AZURE_LATENCY=azure: .*task hub azure-storage\)/,
      );

      sessionId = await client.startSession();
      chatMessageId = await client.send(sessionId, 'Tell me a long story about a lighthouse keeper');
      await firstContent(client, sessionId, chatMessageId);
      first.child.kill('SIGINT');
      expect(await first.exited).toBe(0);
      expect(first.stderr()).toMatch(/SIGINT: stopping the local runtime/);
    } finally {
      first.child.kill('SIGKILL');
    }
    // The port is free at once: a new runtime takes it, and the turn ends there, streamed to its end once.
    expect(await portIsFree(port)).toBe(true);
    const second = run(cwd, { ...env, LOCAL_AZURE_LATENCY: 'off', OFFLINE_MODEL_TOKENS_PER_SECOND: '0' });
    try {
      await waitForOutput(second, /listening on/);
      expect(second.stdout()).not.toMatch(/Latency:/);
      const frames = await client.stream(sessionId, chatMessageId, { timeoutMs: 60_000 });
      expect(frames.at(-1)?.data.type).toBe('message-end');
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      second.child.kill('SIGKILL');
    }
  }, 180_000);

  it('starts with local.settings.sample.json copied as local.settings.json, as it is', async () => {
    await copyFile(join(root, 'local.settings.sample.json'), join(cwd, 'local.settings.json'));
    // Only the port and the data folder come from the environment (it wins over the file), so tests never clash.
    const started = run(cwd, { PORT: '0', LOCAL_DATA_DIR: join(cwd, 'sample-data') });
    try {
      await waitForOutput(started, /listening on/);
      expect(started.stdout()).toMatch(/offline model \(a deterministic stand-in, not a real LLM\)/);
      const url = /listening on (http:\/\/localhost:\d+)\/api/.exec(started.stdout())?.[1];
      const health = await fetch(`${url!.replace('localhost', '127.0.0.1')}/api/health`);
      expect(health.status).toBe(200);
      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
    } finally {
      started.child.kill('SIGKILL');
      await rm(join(cwd, 'local.settings.json'));
    }
  });

  it('says in one line that the port is taken, naming PORT, instead of a stack', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const failed = run(cwd, { PORT: String(port) });
      expect(await failed.exited).toBe(1);
      expect(failed.stderr().trim().split('\n')).toEqual([
        expect.stringMatching(new RegExp(`^Port ${port} on 127\\.0\\.0\\.1 is already in use.*set PORT`)),
      ]);
      expect(failed.stderr()).not.toMatch(/EADDRINUSE|\n\s+at /);
    } finally {
      taken.close();
    }
  });

  it('refuses to start when a setting is missing, naming it', async () => {
    const failed = run(cwd, { PORT: '0', LLM_PROVIDER: 'openai-compatible', LLM_CHAT_MODEL: 'm' });
    expect(await failed.exited).toBe(1);
    expect(failed.stderr()).toMatch(/LLM_BASE_URL: missing/);
    expect(failed.stderr()).toMatch(/LLM_EMBEDDING_MODEL: missing/);
    expect(failed.stdout()).toBe('');
  });

  it('refuses malformed settings, from the environment and from local.settings.json', async () => {
    await writeFile(
      join(cwd, 'local.settings.json'),
      JSON.stringify({ Values: { OFFLINE_MODEL_TTFT_MS: 'soon' } }),
    );
    try {
      const failed = run(cwd, { PORT: 'seventy' });
      expect(await failed.exited).toBe(1);
      expect(failed.stderr()).toMatch(/PORT: must be a port number/);
      const fromFile = run(cwd, { PORT: '0' });
      expect(await fromFile.exited).toBe(1);
      expect(fromFile.stderr()).toMatch(/OFFLINE_MODEL_TTFT_MS/);
    } finally {
      await rm(join(cwd, 'local.settings.json'));
    }
  });

  it('loads the Functions host entry under Node with valid Azure settings, and refuses bad ones', async () => {
    const load = `import(${JSON.stringify(functionsEntry)}).then(() => console.log('registered'))`;
    const azure = {
      APP_ENV: 'azure',
      COSMOS_ENDPOINT: 'https://acct.documents.azure.com:443/',
      ServiceBusConnection__fullyQualifiedNamespace: 'ns.servicebus.windows.net',
      WEBPUBSUB_ENDPOINT: 'https://wps.webpubsub.azure.com',
      LLM_PROVIDER: 'azure-openai',
      AZURE_OPENAI_ENDPOINT: 'https://aoai.openai.azure.com',
      AZURE_OPENAI_CHAT_DEPLOYMENT: 'chat',
      AZURE_OPENAI_EMBEDDING_DEPLOYMENT: 'embeddings',
      WEBSITE_AUTH_ENABLED: 'True',
    };
    const loaded = run(cwd, azure, ['-e', load]);
    expect(await loaded.exited).toBe(0);
    expect(loaded.stdout()).toMatch(/registered/);
    // Outside the host the package only announces each registration it skips: every table entry gets there.
    expect(loaded.stdout() + loaded.stderr()).toMatch(/register function "health"/);

    const refused = run(cwd, { ...azure, COSMOS_ENDPOINT: '', COSMOS_KEY: 'a-key' }, ['-e', load]);
    expect(await refused.exited).not.toBe(0);
    expect(refused.stderr()).toMatch(/COSMOS_ENDPOINT: missing/);
    expect(refused.stderr()).toMatch(/COSMOS_KEY: must not be set in Azure/);
  });
});
