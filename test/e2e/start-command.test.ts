// `npm start`'s entry as a user runs it: one ready line, a healthy API, a clean stop on SIGTERM, and a
// start-up refused with a message naming each bad setting.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const entry = fileURLToPath(new URL('../../local/start.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function run(cwd: string, env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['--import', tsx, entry], {
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

async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('the start command', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'chat-start-'));
  });
  afterAll(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  it('prints one line when ready, serves a healthy API and stops cleanly', async () => {
    const started = run(cwd, { PORT: '0', LOCAL_DATA_DIR: join(cwd, 'data') });
    try {
      await until(() => /listening on/.test(started.stdout()), 'the ready line');
      const lines = started.stdout().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/offline model \(a deterministic stand-in, not a real LLM\)/);
      const url = /listening on (http:\/\/localhost:\d+)\/api/.exec(lines[0]!)?.[1];
      expect(url).toBeDefined();
      const health = await fetch(`${url!.replace('localhost', '127.0.0.1')}/api/health`);
      expect(health.status).toBe(200);
      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
    } finally {
      started.child.kill('SIGKILL');
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
});
