// Stages the function app's deployment package in .deploy/: compiled functions/ and shared/, host.json, package.json
// and its lock, and the production dependencies alone, for Flex Consumption's Linux x64 workers. azd runs it before
// packaging the `api` service (azure.yaml); by hand: npx tsx scripts/stage-function-app.ts
import { cpSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
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

function run(command: string, args: readonly string[], cwd: string): void {
  // npm is npm.cmd on Windows, which only a shell starts.
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd} (exit ${String(result.status)})`);
}

/** Copies what the app runs from an already built `root` into `stage` (emptied first). */
export function copyDeployedFiles(root: string, stage: string): void {
  rmSync(stage, { recursive: true, force: true });
  for (const folder of DEPLOYED_DIST) {
    const from = path.join(root, 'dist', folder);
    if (!existsSync(from)) throw new Error(`${from} is missing: run \`npm run build\` first.`);
    cpSync(from, path.join(stage, 'dist', folder), { recursive: true });
  }
  for (const file of DEPLOYED_FILES) cpSync(path.join(root, file), path.join(stage, file));
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

function main(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const stage = path.join(root, STAGE_DIR);
  run('npm', ['run', 'build'], root);
  copyDeployedFiles(root, stage);
  run('npm', INSTALL_ARGS, stage);
  const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(
    `Staged ${STAGE_DIR}/: ${megabytes(folderBytes(stage))} ` +
      `(node_modules ${megabytes(folderBytes(path.join(stage, 'node_modules')))}).`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
