// The function app's package holds only what runs: the production dependency closure leaves out the local runtime and
// the tooling, the staging copies the compiled functions/ and shared/ but not local/, and azd ships that folder.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  copyDeployedFiles,
  DEPLOYED_DIST,
  INSTALL_ARGS,
  SCHEDULER_BUNDLE_VERSION,
  STAGE_DIR,
  taskHubBackend,
} from '../../scripts/stage-function-app.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const readJson = async <T>(file: string) =>
  JSON.parse(await readFile(path.join(repoRoot, file), 'utf8')) as T;

interface Lockfile {
  packages: Record<string, { dev?: boolean }>;
}

describe('the production dependencies', () => {
  it('leave out the local runtime, the tests and the build tools', async () => {
    const lock = await readJson<Lockfile>('package-lock.json');
    // What `npm ci --omit=dev` installs: every locked package not marked dev, by its name.
    const installed = new Set(
      Object.entries(lock.packages)
        .filter(([where, entry]) => where.startsWith('node_modules/') && entry.dev !== true)
        .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length)),
    );
    expect(installed.size).toBeGreaterThan(20);
    const devOnly = [
      '@vercel/cosmosdb-server',
      '@peculiar/x509',
      'reflect-metadata',
      'vitest',
      'typescript',
      'eslint',
      'playwright-core',
      'tree-sitter',
      'tsx',
      'dependency-cruiser',
    ];
    expect(devOnly.filter((name) => installed.has(name))).toEqual([]);
    // ...while what the functions import is there.
    for (const name of ['@azure/functions', 'durable-functions', '@azure/cosmos', 'openai', 'zod'])
      expect(installed.has(name), name).toBe(true);
  });
});

describe('the staged package', () => {
  let root: string | undefined;
  afterEach(async () => {
    if (root) await rm(root, { recursive: true, force: true });
    root = undefined;
  });

  async function write(file: string, text = '') {
    await mkdir(path.dirname(path.join(root!, file)), { recursive: true });
    await writeFile(path.join(root!, file), text);
  }

  async function list(dir: string): Promise<string[]> {
    const entries = await readdir(dir, { withFileTypes: true, recursive: true });
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
      .sort();
  }

  it('holds the compiled functions and shared code, the host and package files, and no local runtime', async () => {
    root = await mkdtemp(path.join(tmpdir(), 'stage-'));
    for (const file of [
      'dist/functions/index.js',
      'dist/shared/knowledge/extract-worker.js',
      'dist/local/start.js',
      'host.json',
      'package.json',
      'package-lock.json',
      'README.md',
      'functions/index.ts',
      'local.settings.json',
    ])
      await write(file, file);
    const stage = path.join(root, STAGE_DIR);
    await mkdir(stage);
    await writeFile(path.join(stage, 'stale.js'), 'from an earlier staging');

    copyDeployedFiles(root, stage);

    expect(await list(stage)).toEqual([
      'dist/functions/index.js',
      'dist/shared/knowledge/extract-worker.js',
      'host.json',
      'package-lock.json',
      'package.json',
    ]);
  });

  it("writes host.json's storageProvider for the Durable Task Scheduler when infra deployed it, and keeps the rest", async () => {
    root = await mkdtemp(path.join(tmpdir(), 'stage-'));
    for (const file of ['dist/functions/index.js', 'dist/shared/a.js', 'package.json', 'package-lock.json'])
      await write(file, file);
    const host = await readJson<{
      extensionBundle: { id: string; version: string };
      extensions: { durableTask: Record<string, unknown> & { storageProvider: Record<string, unknown> } };
    }>('host.json');
    await write('host.json', JSON.stringify(host));
    const stage = path.join(root, STAGE_DIR);
    const staged = async () =>
      JSON.parse(await readFile(path.join(stage, 'host.json'), 'utf8')) as typeof host;

    copyDeployedFiles(root, stage, taskHubBackend(''));
    expect(await staged()).toEqual(host);
    expect(host.extensions.durableTask.storageProvider).toMatchObject({ type: 'AzureStorage' });

    copyDeployedFiles(root, stage, taskHubBackend('durable-task-scheduler'));
    const scheduled = await staged();
    expect(scheduled.extensions.durableTask.storageProvider).toEqual({
      type: 'azureManaged',
      connectionStringName: 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING',
    });
    // The task hub keeps its name (the scheduler's task hub is named after it) and its concurrency limits.
    expect(scheduled.extensions.durableTask['hubName']).toBe(host.extensions.durableTask['hubName']);
    expect(scheduled.extensions.durableTask['maxConcurrentActivityFunctions']).toBe(
      host.extensions.durableTask['maxConcurrentActivityFunctions'],
    );
    expect(scheduled.extensionBundle).toEqual({
      id: host.extensionBundle.id,
      version: SCHEDULER_BUNDLE_VERSION,
    });
    // The Durable Task Scheduler's quickstart names bundles from 4.32.0 up to, not including, 5.0.0.
    const [, low, high] = /^\[(\d+\.\d+\.\d+), (\d+\.\d+\.\d+)\)$/.exec(SCHEDULER_BUNDLE_VERSION) ?? [];
    const version = (text = '') => text.split('.').reduce((sum, part) => sum * 1000 + Number(part), 0);
    expect(version(low)).toBeGreaterThanOrEqual(version('4.32.0'));
    expect(version(high)).toBe(version('5.0.0'));
    expect({ ...scheduled, extensions: {}, extensionBundle: {} }).toEqual({
      ...host,
      extensions: {},
      extensionBundle: {},
    });

    expect(() => taskHubBackend('cosmos')).toThrow(
      /DURABLE_TASK_BACKEND must be azure-storage or durable-task-scheduler/,
    );
    // The app setting it names is the one infra/ gives the function app.
    const functionApp = await readFile(path.join(repoRoot, 'infra/modules/function-app.bicep'), 'utf8');
    expect(functionApp).toContain("name: 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'");
    const main = await readFile(path.join(repoRoot, 'infra/main.bicep'), 'utf8');
    expect(main).toMatch(/^output DURABLE_TASK_BACKEND string = chosenDurableTaskBackend$/m);
  });

  it('refuses to stage before the build', async () => {
    root = await mkdtemp(path.join(tmpdir(), 'stage-'));
    await write('host.json');
    expect(() => copyDeployedFiles(root!, path.join(root!, STAGE_DIR))).toThrow(/npm run build/);
  });

  it("contains the app's entry point and installs production dependencies only", async () => {
    const { main } = await readJson<{ main: string }>('package.json');
    expect(DEPLOYED_DIST.some((folder) => main.startsWith(`dist/${folder}/`))).toBe(true);
    expect(INSTALL_ARGS).toContain('--omit=dev');
    expect(INSTALL_ARGS[0]).toBe('ci');
  });

  it('is what azd deploys, without a remote build, staged by the prepackage hook', async () => {
    const azureYaml = await readFile(path.join(repoRoot, 'azure.yaml'), 'utf8');
    const api = /^ {2}api:\n((?: {4}.*\n?|\s*\n)+)/m.exec(azureYaml)?.[1] ?? '';
    expect(api).toMatch(new RegExp(`^ {4}dist: ${STAGE_DIR.replace('.', '\\.')}$`, 'm'));
    expect(api).toMatch(/^ {4}remoteBuild: false$/m);
    const hook = /^ {6}prepackage:\n((?: {8}.*\n?)+)/m.exec(api)?.[1] ?? '';
    expect(hook.match(/run: npx tsx scripts\/stage-function-app\.ts$/gm)).toHaveLength(2);
    const gitignore = await readFile(path.join(repoRoot, '.gitignore'), 'utf8');
    expect(gitignore.split('\n')).toContain(`${STAGE_DIR}/`);
  });
});
