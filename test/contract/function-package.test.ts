// The function app package's rules as azd applies them: which .funcignore decides the remote build and which one
// filters the zip, what a `remoteBuild: false` package keeps, and the azd version from which all this holds.
// git's own matcher stands in for azd's gitignore parser; azd-up.test.ts applies these rules to a real staging.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readAzdProject, remoteBuildDecision, zippedFiles } from '../support/azd-project.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const project = readAzdProject(path.join(repoRoot, 'azure.yaml'));

let scratch: string | undefined;
afterEach(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
  scratch = undefined;
});

async function folder(files: Record<string, string>): Promise<string> {
  scratch = await mkdtemp(path.join(tmpdir(), 'func-package-'));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(scratch, file)), { recursive: true });
    await writeFile(path.join(scratch, file), text);
  }
  return scratch;
}

/** The lowest version a `>= x.y.z` range admits. */
function floor(range: string | undefined): number[] {
  const match = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(range?.trim() ?? '');
  if (!match) throw new Error(`requiredVersions.azd is "${String(range)}", not ">= x.y.z"`);
  return match.slice(1).map(Number);
}

describe('the remote build decision (the .funcignore of the service project)', () => {
  it('refuses remoteBuild: false when the project .funcignore leaves node_modules out', async () => {
    const dir = await folder({ '.funcignore': '.git*\nnode_modules\ntest\n' });
    expect(remoteBuildDecision(dir, false)).toBeInstanceOf(Error);
    expect(remoteBuildDecision(dir, undefined)).toBe(true);
    expect(remoteBuildDecision(dir, true)).toBe(true);
  });

  it('accepts remoteBuild: false with no .funcignore, or one that keeps node_modules', async () => {
    expect(remoteBuildDecision(await folder({}), false)).toBe(false);
    await rm(scratch!, { recursive: true, force: true });
    const dir = await folder({ '.funcignore': 'test\n*.ts\n' });
    expect(remoteBuildDecision(dir, false)).toBe(false);
    expect(remoteBuildDecision(dir, true)).toBeInstanceOf(Error);
  });

  it('is accepted for the api service, whose project has no .funcignore of its own', () => {
    const api = project.services.find((service) => service.name === 'api')!;
    expect({ host: api.host, language: api.language, remoteBuild: api.remoteBuild }).toEqual({
      host: 'function',
      language: 'ts',
      remoteBuild: false,
    });
    expect(remoteBuildDecision(path.join(repoRoot, api.project), api.remoteBuild)).toBe(false);
  });
});

describe('the zip of dist (its own .funcignore, or azd’s defaults)', () => {
  const staged = {
    'dist/functions/index.js': '',
    'host.json': '{}',
    'package.json': '{}',
    'local.settings.json': '{}',
    'node_modules/zod/package.json': '{}',
    '.azure/dev/.env': '',
  };

  it('keeps node_modules of a remoteBuild: false package, and never the local settings or .azure', async () => {
    const dir = await folder(staged);
    expect(zippedFiles(dir, { language: 'ts', remoteBuild: false })).toEqual([
      'dist/functions/index.js',
      'host.json',
      'node_modules/zod/package.json',
      'package.json',
    ]);
    // Before 1.23.12, and with the setting unset, node_modules stays out by default.
    expect(zippedFiles(dir, { language: 'ts' })).not.toContain('node_modules/zod/package.json');
  });

  it("applies dist's .funcignore instead of the defaults when it has one", async () => {
    const dir = await folder({ ...staged, '.funcignore': 'node_modules\n' });
    expect(zippedFiles(dir, { language: 'ts', remoteBuild: false })).toEqual([
      'dist/functions/index.js',
      'host.json',
      'package.json',
    ]);
  });
});

describe('the azd this project needs', () => {
  it('is at least 1.23.12, the first that keeps node_modules in a remoteBuild: false package', () => {
    const [major, minor, patch] = floor(project.requiredVersions?.azd);
    expect(major! * 1e6 + minor! * 1e3 + patch!).toBeGreaterThanOrEqual(1_023_012);
  });
});
