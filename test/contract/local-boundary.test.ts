// local/ stands apart from the product: its services (each folder under local/) import nothing of shared/ or
// functions/ but the contracts they serve; only the runtime's composition (the files directly in local/) wires the
// product in. Tests may assemble anything. The rule fires on a small tree that breaks it, so it cannot pass vacuously.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { problemResponse as localProblem } from '../../local/http/problem.js';
import { problemDetailsSchema, problemResponse as apiProblem } from '../../shared/http/problem.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Where the product lives: a local service reaching in here needs a contract below. */
const PRODUCT_ROOTS = ['shared/', 'functions/', 'web/', 'bench/', 'scripts/', 'test/'];

/**
 * What a local service may import of the product, and why: the ports it serves in process, the definitions it is
 * configured with, and the errors those ports are specified to throw. A key is a folder under local/ or one file.
 */
const LOCAL_CONTRACTS: Readonly<Record<string, readonly { module: string; why: string }[]>> = {
  'local/durable/': [
    {
      module: 'shared/durable/orchestration-client.ts',
      why: 'the Durable client API the app calls, which the local driver serves in process',
    },
    {
      module: 'shared/errors.ts',
      why: 'that API is specified by the errors it throws (a duplicate instance id is a ConflictError)',
    },
  ],
  'local/service-bus/': [
    {
      module: 'shared/messaging/message-publisher.ts',
      why: 'the publisher port the local broker serves in process',
    },
    {
      module: 'shared/messaging/service-bus-entities.ts',
      why: 'the queues, topics and subscriptions (and the trigger connection name) the broker is declared with',
    },
    {
      module: 'shared/errors.ts',
      why: 'the publisher port is specified by the errors it throws (a reused message id is a ConflictError)',
    },
  ],
  'local/cosmos/': [
    {
      module: 'shared/cosmos/container-spec.ts',
      why: 'the container definitions (partition keys, indexes, TTL) the account is provisioned with',
    },
    {
      module: 'shared/cosmos/indexed-paths.ts',
      why: 'the indexing policy a container definition implies, provisioned as infra provisions it',
    },
  ],
  'local/cosmos/search-functions.ts': [
    {
      module: 'shared/search/full-text.ts',
      why: "test-only search functions rank with the product's tokenizer, so a test compares the query and in-process paths",
    },
  ],
  'local/http/': [
    {
      module: 'functions/definition.ts',
      why: 'the trigger definitions the host mounts: the Functions host contract',
    },
  ],
  'local/timers/': [
    {
      module: 'functions/definition.ts',
      why: 'the timer definitions (schedule and handler) the timer host runs: the Functions host contract',
    },
  ],
};

interface SourceFile {
  /** Repository-relative, with forward slashes. */
  path: string;
  text: string;
}

interface BoundaryViolation {
  file: string;
  imports: string;
}

/** Relative module specifiers of `import ... from`, `export ... from`, `import '...'` and `import('...')`. */
function relativeImports(text: string): string[] {
  const specifiers = [...text.matchAll(/\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map(
    (match) => match[1] ?? '',
  );
  return [...new Set(specifiers)];
}

/** The repository path an import names: `.js` as written for the `.ts` file beside it. */
function resolveImport(from: string, specifier: string): string {
  return path.posix.join(path.posix.dirname(from), specifier).replace(/\.js$/, '.ts');
}

const isService = (file: string) => /^local\/[^/]+\//.test(file);
const isTest = (file: string) => /\.test\.ts$/.test(file);
const inProduct = (target: string) => PRODUCT_ROOTS.some((root) => target.startsWith(root));

function allowed(file: string, target: string, contracts: typeof LOCAL_CONTRACTS): boolean {
  const folder = /^local\/[^/]+\//.exec(file)?.[0] ?? '';
  return [...(contracts[folder] ?? []), ...(contracts[file] ?? [])].some(({ module }) => module === target);
}

/**
 * Each import of a local service's (non-test) file that reaches the product without a contract, or reaches a file
 * directly in local/ (the composition) that itself imports the product.
 */
function checkLocalBoundary(
  files: readonly SourceFile[],
  contracts: typeof LOCAL_CONTRACTS = LOCAL_CONTRACTS,
): BoundaryViolation[] {
  const byPath = new Map(files.map((file) => [file.path, file]));
  const reachesProduct = (file: SourceFile) =>
    relativeImports(file.text).some((specifier) => inProduct(resolveImport(file.path, specifier)));
  const violations: BoundaryViolation[] = [];
  for (const file of files) {
    if (!isService(file.path) || isTest(file.path)) continue;
    for (const specifier of relativeImports(file.text)) {
      const target = resolveImport(file.path, specifier);
      const composition = /^local\/[^/]+\.ts$/.test(target) ? byPath.get(target) : undefined;
      if (
        inProduct(target)
          ? !allowed(file.path, target, contracts)
          : composition && reachesProduct(composition)
      )
        violations.push({ file: file.path, imports: target });
    }
  }
  return violations;
}

async function sourceFiles(root: string, folder: string): Promise<SourceFile[]> {
  const entries = await readdir(path.join(root, folder), { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
  return Promise.all(
    files.map(async (file) => ({ path: file, text: await readFile(path.join(root, file), 'utf8') })),
  );
}

describe('the local boundary', () => {
  it('holds for local/ as it is: its services import only the contracts they serve', async () => {
    const files = await sourceFiles(repoRoot, 'local');
    expect(files.filter((file) => isService(file.path) && !isTest(file.path)).length).toBeGreaterThan(50);
    expect(checkLocalBoundary(files)).toEqual([]);
  });

  it('lists only contracts that exist and that some service still imports', async () => {
    const files = await sourceFiles(repoRoot, 'local');
    const imported = new Set(
      files
        .filter((file) => isService(file.path) && !isTest(file.path))
        .flatMap((file) =>
          relativeImports(file.text).map((specifier) => resolveImport(file.path, specifier)),
        ),
    );
    for (const { module } of Object.values(LOCAL_CONTRACTS).flat()) {
      await expect(readFile(path.join(repoRoot, module), 'utf8')).resolves.toBeTypeOf('string');
      expect(imported.has(module), module).toBe(true);
    }
  });

  it('fires on a service that imports the product, directly or through the composition', () => {
    const tree: SourceFile[] = [
      {
        path: 'local/offline-model/rules.ts',
        text: "import { FORMAT } from '../../shared/memory/memory-llm.js';\nimport { x } from './words.js';",
      },
      {
        path: 'local/offline-model/words.ts',
        text: "export const x = await import('../../functions/table.js');",
      },
      { path: 'local/offline-model/rules.test.ts', text: "import '../../shared/memory/memory-llm.js';" },
      { path: 'local/cosmos/server.ts', text: "import { names } from '../vocabulary.js';" },
      { path: 'local/vocabulary.ts', text: "export { names } from '../shared/memory/contracts.js';" },
      { path: 'local/cosmos/clock.ts', text: "import { threadCpuMs } from '../thread-cpu.js';" },
      { path: 'local/thread-cpu.ts', text: "import { createRequire } from 'node:module';" },
      { path: 'local/runtime.ts', text: "import { createApp } from '../shared/app/app.js';" },
      {
        path: 'local/durable/driver.ts',
        text: "import type { OrchestrationClient } from '../../shared/durable/orchestration-client.js';",
      },
    ];
    expect(checkLocalBoundary(tree)).toEqual([
      { file: 'local/offline-model/rules.ts', imports: 'shared/memory/memory-llm.ts' },
      { file: 'local/offline-model/words.ts', imports: 'functions/table.ts' },
      { file: 'local/cosmos/server.ts', imports: 'local/vocabulary.ts' },
    ]);
  });

  it("answers the local host's own refusals in the API's problem format", () => {
    for (const [status, code] of [
      [404, 'not_found'],
      [405, 'method_not_allowed'],
      [503, 'unavailable'],
    ] as const) {
      const local = localProblem(status, code, 'why', {}, { 'retry-after': '1' });
      expect(local).toEqual(apiProblem(status, code, 'why', {}, { 'retry-after': '1' }));
      expect(problemDetailsSchema.parse(JSON.parse(local.body as string))).toMatchObject({ status, code });
    }
  });
});
