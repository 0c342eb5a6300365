// The real Bicep compiler for the infra tests: restored from NuGet by `dotnet restore` of tools/bicep/bicep.csproj
// into .tools/nuget when absent, made executable (NuGet keeps no file modes), then run on the templates.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const toolProject = path.join(repoRoot, 'tools', 'bicep', 'bicep.csproj');
const packagesDir = path.join(repoRoot, '.tools', 'nuget');

/** The pinned version, as tools/bicep/bicep.csproj says it. */
export const BICEP_VERSION = /<BicepVersion>([^<]+)<\/BicepVersion>/.exec(
  readFileSync(toolProject, 'utf8'),
)![1]!;

export const BICEP_BINARY = path.join(
  packagesDir,
  'azure.bicep.commandline.linux-x64',
  BICEP_VERSION,
  'tools',
  'bicep',
);

export interface BicepResult {
  status: number;
  stdout: string;
  stderr: string;
  /** The compiler's diagnostics, one `file(line,col) : Level CODE: message` line each. */
  diagnostics: string[];
}

export type Compiler =
  | { ok: true; version: string; run(args: string[], input?: string): BicepResult }
  | { ok: false; reason: string };

function hasDotnet(): boolean {
  return spawnSync('dotnet', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Restores the compiler if needed; says why when it cannot (no .NET SDK, or the restore failed). */
export function bicepCompiler(): Compiler {
  if (!existsSync(BICEP_BINARY)) {
    if (!hasDotnet())
      return {
        ok: false,
        reason:
          'no `dotnet` on PATH: install the .NET SDK so tools/bicep/bicep.csproj can restore the Bicep compiler',
      };
    const restore = spawnSync('dotnet', ['restore', toolProject, '--packages', packagesDir], {
      encoding: 'utf8',
      timeout: 300_000,
    });
    if (restore.status !== 0 || !existsSync(BICEP_BINARY))
      return {
        ok: false,
        reason: `dotnet restore of tools/bicep/bicep.csproj failed (${restore.status ?? restore.signal}):\n${restore.stdout}${restore.stderr}`,
      };
  }
  chmodSync(BICEP_BINARY, 0o755);
  const version = execFileSync(BICEP_BINARY, ['--version'], { encoding: 'utf8' }).trim();
  return {
    ok: true,
    version,
    // `input` goes to standard input: `bicep console` reads declarations and expressions there, one a line.
    run(args: string[], input?: string): BicepResult {
      const result = spawnSync(BICEP_BINARY, args, {
        cwd: repoRoot,
        encoding: 'utf8',
        timeout: 240_000,
        ...(input === undefined ? {} : { input }),
      });
      const stderr = result.stderr ?? '';
      return {
        status: result.status ?? -1,
        stdout: result.stdout ?? '',
        stderr,
        diagnostics: stderr
          .split('\n')
          .filter((line) => /\) : (Error|Warning|Info) /.test(line))
          .map((line) => line.replace(repoRoot, '')),
      };
    },
  };
}
