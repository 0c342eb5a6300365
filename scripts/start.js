// `npm start`: refuses a taken port or data folder before any work, transpiles only the sources newer than their
// dist/ output (esbuild, no type check), builds the web client if web/ changed, then runs dist/local/start.js.
// Plain JavaScript so that it runs before anything is built.
import { spawn } from 'node:child_process';
import console from 'node:console';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);

/** PORT and LOCAL_DATA_DIR as the runtime reads them: the environment over local.settings.json's Values. */
function localSettings() {
  let values = {};
  try {
    values = JSON.parse(readFileSync('local.settings.json', 'utf8')).Values ?? {};
  } catch {
    // Absent or malformed: the runtime itself reports a malformed file once it is built.
  }
  const pick = (name, fallback) => String(process.env[name] ?? values[name] ?? fallback).trim() || fallback;
  return { port: pick('PORT', '7071'), dataDir: pick('LOCAL_DATA_DIR', '.local-data') };
}

/** Resolves with a message when something already listens on the port (the runtime listens on 127.0.0.1). */
function portTaken(port) {
  return new Promise((resolvePort) => {
    const probe = createServer();
    probe.once('error', (error) =>
      resolvePort(
        error.code === 'EADDRINUSE'
          ? `Port ${port} on 127.0.0.1 is already in use (is another local runtime running?): stop what listens ` +
              'on it, or set PORT in local.settings.json or the environment to another port (0 picks a free one).'
          : undefined,
      ),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolvePort(undefined)));
  });
}

/** The same rule as the runtime's lock: a lock whose process is alive means the folder is in use. */
function folderTaken(dataDir) {
  let owner;
  try {
    owner = Number.parseInt(readFileSync(join(dataDir, '.lock'), 'utf8'), 10);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(owner)) return undefined;
  try {
    process.kill(owner, 0);
  } catch (error) {
    if (error.code !== 'EPERM') return undefined;
  }
  return (
    `The data folder ${resolve(dataDir)} is in use by another local runtime (process ${owner}). ` +
    'Stop it, or give this one its own folder with LOCAL_DATA_DIR.'
  );
}

function sources(folder) {
  if (!existsSync(join(root, folder))) return [];
  return readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

function modifiedAt(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

/**
 * Emits dist/ for every source newer than its output (or than tsconfig.json or this script), with esbuild: one
 * file in, one ES module out, as tsc emits them, in a fraction of tsc's time since nothing is type-checked.
 */
async function build() {
  const inputsTime = Math.max(
    modifiedAt(join(root, 'tsconfig.json')),
    modifiedAt(fileURLToPath(import.meta.url)),
  );
  const files = ['functions', 'shared', 'local'].flatMap(sources);
  const stale = files.filter((file) => {
    const built = modifiedAt(join(root, 'dist', file.replace(/\.ts$/, '.js')));
    return built < modifiedAt(join(root, file)) || built < inputsTime;
  });
  if (stale.length === 0) return;
  console.log(`npm start: building ${stale.length} of ${files.length} files (changed since the last build)…`);
  const ticker = setInterval(() => console.log(`npm start: building… (${seconds()} s)`), 5_000);
  try {
    const { build: esbuild } = await import('esbuild');
    await esbuild({
      absWorkingDir: root,
      entryPoints: stale,
      outdir: 'dist',
      outbase: '.',
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: 'es2022',
      sourcemap: true,
      tsconfig: 'tsconfig.json',
      logLevel: 'error',
    });
  } finally {
    clearInterval(ticker);
  }
  console.log(`npm start: built in ${seconds()} s; starting…`);
}

const { port, dataDir } = localSettings();
const taken =
  (/^\d+$/.test(port) && Number(port) !== 0 ? await portTaken(Number(port)) : undefined) ??
  folderTaken(dataDir);
if (taken !== undefined) {
  console.error(taken);
  process.exit(1);
}
try {
  await build();
} catch (error) {
  console.error(`npm start: the build failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
try {
  // The web client served at / is rebuilt only when its sources changed since its last build.
  const { webBuildStaleness, buildWebClient } = await import('../web/build.js');
  const stale = webBuildStaleness(root);
  if (stale !== undefined) {
    console.log(`npm start: building the web client (${stale})…`);
    const ticker = setInterval(
      () => console.log(`npm start: building the web client… (${seconds()} s)`),
      5_000,
    );
    try {
      await buildWebClient(root);
    } finally {
      clearInterval(ticker);
    }
    console.log(`npm start: web client built in ${seconds()} s`);
  }
} catch (error) {
  // The API works without the page: say why / has nothing, and start anyway.
  console.error(
    `npm start: the web client's build failed, so / serves nothing: ${error instanceof Error ? error.message : String(error)}`,
  );
}
// The runtime runs as a child so that it is exactly what `node dist/local/start.js` runs; signals pass through.
const runtime = spawn(process.execPath, [join(root, 'dist/local/start.js')], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => runtime.kill(signal));
runtime.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
