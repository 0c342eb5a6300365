// Builds the web client (web/ → dist/web/ with Vite) only when an input changed since the last build: the files the
// last build bundled (listed in dist/web-build.json) and anything under web/. Used by `npm start`, the staging, the
// benches and the browser tests; plain JavaScript so that `npm start` can run it before anything is built.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';

const STAMP = 'dist/web-build.json';

function modifiedAt(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

function filesUnder(root, folder) {
  if (!existsSync(join(root, folder))) return [];
  return readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !entry.parentPath.includes('node_modules'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** True when the checkout has a web client at all (web/vite.config.ts). */
export function hasWebClient(root) {
  return existsSync(join(root, 'web', 'vite.config.ts'));
}

/**
 * Why the built client is out of date, or undefined when it is current. An input is newer than the stamp written
 * after the last build, or there is no build, or the lockfile (the libraries bundled) changed.
 */
export function webBuildStaleness(root) {
  if (!hasWebClient(root)) return undefined;
  const builtAt = modifiedAt(join(root, STAMP));
  if (builtAt < 0 || !existsSync(join(root, 'dist', 'web', 'index.html'))) return 'not built yet';
  let inputs;
  try {
    inputs = JSON.parse(readFileSync(join(root, STAMP), 'utf8')).inputs ?? [];
  } catch {
    return 'its build record is unreadable';
  }
  const candidates = new Set([...filesUnder(root, 'web'), ...inputs, 'package-lock.json']);
  for (const file of candidates) {
    const at = modifiedAt(join(root, file));
    // A bundled file that is gone changed the build too.
    if (at > builtAt || (at < 0 && inputs.includes(file))) return `${file} changed`;
  }
  return undefined;
}

/**
 * Runs Vite's build with web/vite.config.ts, then records the files it bundled (outside node_modules). With
 * `outDir` it builds elsewhere (a deployment) and records nothing: dist/web stays the local build. `base` replaces
 * the relative asset URLs (a host that serves the page at deep routes but its assets only at the root).
 */
export async function buildWebClient(root, options = {}) {
  const { build } = await import('vite');
  // Vite compiles libraries for the NODE_ENV it finds, and test runners set it to `test`: React's development
  // build would then be what the browser tests and `npm start` serve. The client is always built for production.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  let result;
  try {
    result = await build({
      configFile: join(root, 'web', 'vite.config.ts'),
      mode: 'production',
      logLevel: 'warn',
      ...(options.outDir === undefined ? {} : { build: { outDir: options.outDir, emptyOutDir: true } }),
      ...(options.base === undefined ? {} : { base: options.base }),
    });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  if (options.outDir !== undefined) return;
  const outputs = Array.isArray(result) ? result : [result];
  const inputs = new Set();
  for (const output of outputs)
    for (const item of output.output ?? [])
      for (const id of item.moduleIds ?? []) {
        const file = relative(root, id.split('?')[0]);
        if (!file.startsWith('..') && !file.includes('node_modules') && !file.startsWith('\0'))
          inputs.add(file);
      }
  writeFileSync(join(root, STAMP), JSON.stringify({ inputs: [...inputs].sort() }, null, 1));
}

/** Builds when stale; returns what it did, for a one-line report. */
export async function ensureWebClient(root) {
  const reason = webBuildStaleness(root);
  if (reason === undefined) return { built: false };
  await buildWebClient(root);
  return { built: true, reason };
}
