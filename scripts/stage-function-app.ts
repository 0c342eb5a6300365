// Stages the function app's deployment package in .deploy/: compiled functions/ and shared/, host.json (its task hub's
// backend as infra/ deployed it), package.json and its lock, and the production dependencies alone, for Linux x64.
// azd runs it before packaging the `api` service (azure.yaml); by hand: npx tsx scripts/stage-function-app.ts [--out dir]
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

/** Where azure.yaml's `dist` points: azd zips this folder as it is. */
export const STAGE_DIR = '.deploy';

/** The compiled folders the function app runs; dist/local (the local runtime) stays behind. */
export const DEPLOYED_DIST = ['functions', 'shared'] as const;

/** The project files the Functions host reads besides the code. */
export const DEPLOYED_FILES = ['host.json', 'package.json', 'package-lock.json'] as const;

/**
 * Production dependencies only, for the platform the app runs on rather than the one it is staged on: Flex
 * Consumption runs Linux x64 (glibc), and an optional native package (pdfjs-dist's @napi-rs/canvas) must be that
 * build. No production dependency has an install script, so none is run.
 */
export const INSTALL_ARGS = [
  'ci',
  '--omit=dev',
  '--os=linux',
  '--cpu=x64',
  '--libc=glibc',
  '--ignore-scripts',
  '--no-audit',
  '--no-fund',
] as const;

/** The task hub's backends infra/ deploys: main.bicep's durableTaskBackend, in azd's environment as DURABLE_TASK_BACKEND. */
export const TASK_HUB_BACKENDS = ['azure-storage', 'durable-task-scheduler'] as const;
export type TaskHubBackend = (typeof TASK_HUB_BACKENDS)[number];

/** The app setting infra/ fills with the scheduler's connection string (its endpoint and the managed identity). */
export const SCHEDULER_CONNECTION_SETTING = 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING';

/**
 * The bundle range the Durable Task Scheduler's quickstart for non-.NET apps names: they get the Durable extension
 * with the scheduler's `azureManaged` provider from the bundle, not from a package of their own.
 */
export const SCHEDULER_BUNDLE_VERSION = '[4.32.0, 5.0.0)';

interface HostJson {
  extensionBundle?: { id: string; version: string };
  extensions?: { durableTask?: { storageProvider?: Record<string, unknown> } & Record<string, unknown> };
  [key: string]: unknown;
}

/**
 * host.json for the backend: as it is for Azure Storage (its polling settings are those of that provider); for the
 * scheduler, its storageProvider names the connection string's setting, and the bundle is one that has the provider.
 */
export function hostJsonFor(host: HostJson, backend: TaskHubBackend): HostJson {
  if (backend === 'azure-storage') return host;
  const durableTask = host.extensions?.durableTask;
  if (durableTask === undefined)
    throw new Error('host.json has no extensions.durableTask to point at the scheduler.');
  return {
    ...host,
    extensionBundle: {
      id: host.extensionBundle?.id ?? 'Microsoft.Azure.Functions.ExtensionBundle',
      version: SCHEDULER_BUNDLE_VERSION,
    },
    extensions: {
      ...host.extensions,
      durableTask: {
        ...durableTask,
        storageProvider: { type: 'azureManaged', connectionStringName: SCHEDULER_CONNECTION_SETTING },
      },
    },
  };
}

/** DURABLE_TASK_BACKEND as azd has it: unset or empty is Azure Storage (the default of infra/); anything else fails. */
export function taskHubBackend(value: string | undefined): TaskHubBackend {
  if (value === undefined || value === '') return 'azure-storage';
  const backend = TASK_HUB_BACKENDS.find((known) => known === value);
  if (backend === undefined)
    throw new Error(`DURABLE_TASK_BACKEND must be ${TASK_HUB_BACKENDS.join(' or ')}, not "${value}".`);
  return backend;
}

function run(command: string, args: readonly string[], cwd: string): void {
  // npm is npm.cmd on Windows, which only a shell starts.
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd} (exit ${String(result.status)})`);
}

/**
 * Copies what the app runs from an already built `root` into `stage` (emptied first), host.json written for the task
 * hub's backend (absent: Azure Storage, host.json as it is).
 */
export function copyDeployedFiles(
  root: string,
  stage: string,
  backend: TaskHubBackend = 'azure-storage',
): void {
  rmSync(stage, { recursive: true, force: true });
  for (const folder of DEPLOYED_DIST) {
    const from = path.join(root, 'dist', folder);
    if (!existsSync(from)) throw new Error(`${from} is missing: run \`npm run build\` first.`);
    cpSync(from, path.join(stage, 'dist', folder), { recursive: true });
  }
  for (const file of DEPLOYED_FILES) cpSync(path.join(root, file), path.join(stage, file));
  if (backend === 'azure-storage') return;
  const staged = path.join(stage, 'host.json');
  const host = JSON.parse(readFileSync(staged, 'utf8')) as HostJson;
  writeFileSync(staged, `${JSON.stringify(hostJsonFor(host, backend), null, 2)}\n`);
}

/** Bytes under `dir`, symbolic links not followed. */
export function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : (statSync(full, { throwIfNoEntry: false })?.size ?? 0);
  }
  return total;
}

/** The folder `--out <dir>` names (relative to `cwd`), or undefined without the option. */
export function outOption(argv: readonly string[], cwd: string): string | undefined {
  const at = argv.indexOf('--out');
  if (at < 0) return undefined;
  const dir = argv[at + 1];
  if (dir === undefined || dir.startsWith('--')) throw new Error('--out needs a folder: --out <dir>.');
  return path.resolve(cwd, dir);
}

function main(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const stage = outOption(process.argv, process.cwd()) ?? path.join(root, STAGE_DIR);
  run('npm', ['run', 'build'], root);
  // azd hands the hook its environment, where provisioning left main.bicep's outputs.
  copyDeployedFiles(root, stage, taskHubBackend(process.env.DURABLE_TASK_BACKEND));
  run('npm', INSTALL_ARGS, stage);
  const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(
    `Staged ${path.relative(root, stage) || stage}/: ${megabytes(folderBytes(stage))} ` +
      `(node_modules ${megabytes(folderBytes(path.join(stage, 'node_modules')))}).`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (error: unknown) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
