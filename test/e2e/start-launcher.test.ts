// `npm start`'s launcher (scripts/start.js) in a small tree of its own: it refuses a taken port or data folder
// before building anything, builds only the sources (and the web client) changed since their last build, and then
// runs dist/local/start.js (here a stand-in that prints a line), passing its exit code on.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function launch(cwd: string, env: Record<string, string>): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/start.js'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the npm start launcher', () => {
  let tree: string;
  beforeAll(async () => {
    tree = await mkdtemp(join(tmpdir(), 'start-launcher-'));
    await mkdir(join(tree, 'scripts'));
    await cp(join(root, 'scripts/start.js'), join(tree, 'scripts/start.js'));
    await mkdir(join(tree, 'web'));
    await cp(join(root, 'web/build.js'), join(tree, 'web/build.js'));
    await cp(join(root, 'tsconfig.json'), join(tree, 'tsconfig.json'));
    await writeFile(join(tree, 'package.json'), JSON.stringify({ type: 'module' }));
    await symlink(join(root, 'node_modules'), join(tree, 'node_modules'), 'dir');
    await mkdir(join(tree, 'shared'));
    await mkdir(join(tree, 'local'));
    await writeFile(join(tree, 'shared/greeting.ts'), "export const greeting: string = 'hello';\n");
    // Stands in for the runtime: prints a line, and exits with the code the test asks for.
    await writeFile(
      join(tree, 'local/start.ts'),
      "import { greeting } from '../shared/greeting.js';\n" +
        "console.log(`${greeting} from the runtime on port ${process.env.PORT ?? ''}`);\n" +
        "process.exit(Number(process.env.EXIT_CODE ?? '0'));\n",
    );
    // Something outside the sources the build takes in must not be built.
    await writeFile(join(tree, 'shared/greeting.test.ts'), 'export {};\n');
  });
  afterAll(async () => {
    await rm(tree, { recursive: true, force: true });
  });

  it('refuses a taken port in one line, before building anything', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const refused = await launch(tree, { PORT: String(port), LOCAL_DATA_DIR: join(tree, 'data') });
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(new RegExp(`^Port ${port} on 127\\.0\\.0\\.1 is already in use.*set PORT`)),
      ]);
      expect(refused.stdout).toBe('');
      expect(existsSync(join(tree, 'dist'))).toBe(false);
    } finally {
      taken.close();
    }
  });

  it('refuses a data folder another running process holds, before building anything', async () => {
    const dataDir = join(tree, 'held');
    await mkdir(dataDir);
    // This test's own process is alive: the folder reads as in use, as the runtime's lock would say.
    await writeFile(join(dataDir, '.lock'), String(process.pid));
    const refused = await launch(tree, { PORT: '0', LOCAL_DATA_DIR: dataDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is in use by another local runtime \(process \d+\).*LOCAL_DATA_DIR/);
    expect(existsSync(join(tree, 'dist'))).toBe(false);
  });

  it('builds every source once, then only what changed, then nothing, and runs the built runtime', async () => {
    const env = { PORT: '0', LOCAL_DATA_DIR: join(tree, 'data') };
    const first = await launch(tree, env);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/building 2 of 2 files/);
    expect(first.stdout).toMatch(/hello from the runtime on port 0/);
    expect(existsSync(join(tree, 'dist/shared/greeting.test.js'))).toBe(false);
    expect(await readFile(join(tree, 'dist/local/start.js'), 'utf8')).toMatch(
      /from "\.\.\/shared\/greeting\.js"/,
    );

    const unchanged = await launch(tree, env);
    expect(unchanged.stdout).not.toMatch(/building/);
    expect(unchanged.stdout).toMatch(/hello from the runtime/);

    await writeFile(join(tree, 'shared/greeting.ts'), "export const greeting: string = 'hi again';\n");
    // A source saved after its output was built (file systems with coarse clocks could tie them otherwise).
    const later = new Date(Date.now() + 5_000);
    await utimes(join(tree, 'shared/greeting.ts'), later, later);
    const changed = await launch(tree, env);
    expect(changed.stdout).toMatch(/building 1 of 2 files/);
    expect(changed.stdout).toMatch(/hi again from the runtime/);
  });

  it('builds the web client when web/ changed, and not on a warm start', async () => {
    const env = { PORT: '0', LOCAL_DATA_DIR: join(tree, 'data') };
    // The test before dated a source in the future: back to the past, so only the web client is stale here.
    const earlier = new Date(Date.now() - 60_000);
    await utimes(join(tree, 'shared/greeting.ts'), earlier, earlier);
    await writeFile(
      join(tree, 'web/vite.config.ts'),
      "import { fileURLToPath } from 'node:url';\n" +
        "export default { root: fileURLToPath(new URL('.', import.meta.url)), base: './', logLevel: 'warn',\n" +
        "  build: { outDir: fileURLToPath(new URL('../dist/web', import.meta.url)), emptyOutDir: true } };\n",
    );
    await writeFile(
      join(tree, 'web/index.html'),
      '<!doctype html><title>t</title><script type="module" src="./main.js"></script>',
    );
    await writeFile(join(tree, 'web/main.js'), "document.title = 'first';\n");
    const first = await launch(tree, env);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/building the web client \(not built yet\)/);
    expect(first.stdout).toMatch(/from the runtime/);
    expect(existsSync(join(tree, 'dist/web/index.html'))).toBe(true);

    const warm = await launch(tree, env);
    expect(warm.stdout).not.toMatch(/building/);
    expect(warm.stdout).toMatch(/from the runtime/);

    await writeFile(join(tree, 'web/main.js'), "document.title = 'second';\n");
    const later = new Date(Date.now() + 5_000);
    await utimes(join(tree, 'web/main.js'), later, later);
    const changed = await launch(tree, env);
    expect(changed.stdout).toMatch(/building the web client \(web\/main\.js changed\)/);
    expect(changed.stderr).toBe('');
  });

  it("passes the runtime's exit code on", async () => {
    const failed = await launch(tree, { PORT: '0', LOCAL_DATA_DIR: join(tree, 'data'), EXIT_CODE: '3' });
    expect(failed.code).toBe(3);
  });
});
