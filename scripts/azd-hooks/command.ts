// Runs a command-line tool (az, azd) for the azd hooks and returns what it printed; a missing tool is an answer.
import { spawnSync } from 'node:child_process';

export interface CommandResult {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The tool is not installed (or not on PATH). */
  missing: boolean;
}

/** Quotes an argument for cmd.exe, which starts az.cmd and azd on Windows. */
function quoteForCmd(arg: string): string {
  return /^[\w@./:=-]+$/.test(arg) ? arg : `"${arg.replaceAll('"', '""')}"`;
}

export function runCommand([tool, ...args]: readonly string[]): CommandResult {
  if (tool === undefined) throw new Error('No command to run.');
  const windows = process.platform === 'win32';
  const result = spawnSync(tool, windows ? args.map(quoteForCmd) : args, {
    encoding: 'utf8',
    shell: windows,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const missing =
    (result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT' ||
    (windows && result.status === 9009) ||
    (windows && /is not recognized as an internal or external command/.test(result.stderr ?? ''));
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '', missing };
}
