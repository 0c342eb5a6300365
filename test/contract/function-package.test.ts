// What Core Tools' `func azure functionapp publish` uploads from the project root for a remote build: the files
// .funcignore leaves in, which must hold everything `npm run build` reads and no node_modules (azd deploys the staged
// .deploy/ instead: deployment-package.test.ts). git's own matcher applies .funcignore (gitignore syntax).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'funcignore-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The given paths that .funcignore leaves out of the package. */
function ignored(paths: readonly string[]): Set<string> {
  execFileSync('git', ['init', '-q', scratch]);
  let output = '';
  try {
    output = execFileSync(
      'git',
      [
        '-c',
        `core.excludesFile=${path.join(repoRoot, '.funcignore')}`,
        'check-ignore',
        '--no-index',
        '--stdin',
      ],
      { cwd: scratch, input: paths.join('\n'), encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] },
    );
  } catch (error) {
    // check-ignore exits 1 when none of the paths is ignored: an answer, not a failure.
    if ((error as { status?: number }).status !== 1) throw error;
  }
  return new Set(output.split('\n').filter(Boolean));
}

const tracked = execFileSync('git', ['ls-files'], { cwd: repoRoot, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);
const packageJson = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  main: string;
  scripts: Record<string, string>;
};

describe('the function app package (.funcignore)', () => {
  const probes = [
    'node_modules/zod/package.json',
    'node_modules/.bin/tsc',
    '.azure/dev/.env',
    '.deploy/host.json',
  ];
  const left = ignored([...tracked, ...probes]);
  const kept = tracked.filter((file) => !left.has(file));

  it('leaves out node_modules, which the remote build installs, the azd environment and the staged package', () => {
    for (const probe of probes) expect(left.has(probe), probe).toBe(true);
  });

  it('keeps what the remote `npm run build` reads: package files, tsconfig.json and every source it compiles', () => {
    expect(packageJson.scripts.build).toBe('tsc -p tsconfig.json');
    for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'host.json'])
      expect(kept, file).toContain(file);
    const tsconfig = JSON.parse(readFileSync(path.join(repoRoot, 'tsconfig.json'), 'utf8')) as {
      include: string[];
    };
    const roots = tsconfig.include.map((pattern) => pattern.split('/')[0]!);
    const sources = tracked.filter(
      (file) => roots.includes(file.split('/')[0]!) && file.endsWith('.ts') && !file.endsWith('.test.ts'),
    );
    expect(sources.length).toBeGreaterThan(50);
    expect(
      sources.filter((file) => left.has(file)),
      'sources the package would lack',
    ).toEqual([]);
  });

  it('names the compiled functions/index.ts as the entry point the host loads (package.json main)', () => {
    expect(packageJson.main).toBe('dist/functions/index.js');
    expect(kept).toContain('functions/index.ts');
  });

  it('leaves out tests, infra and tooling', () => {
    for (const file of ['infra/main.bicep', 'vitest.config.ts', 'tsconfig.check.json', 'eslint.config.js'])
      expect(left.has(file), file).toBe(true);
    expect(kept.filter((file) => /\.test\.ts$|^test\/|^bench\/|^scripts\//.test(file))).toEqual([]);
  });
});
