// The layering rules (DESIGN §3, STYLE 13 and 16), checked by dependency-cruiser over the real import graph,
// type-only imports included. `npm test` runs this (npm run layers); test/contract/layering.test.ts shows that
// every rule fires on a tree that breaks it.
//   npx tsx scripts/check-layering.ts
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type IForbiddenRuleType, type IViolation } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

/** The SDKs of the platform: only adapters, the composition root and the trigger edge may import them. */
const PLATFORM_SDKS = [
  '@azure/cosmos',
  '@azure/service-bus',
  '@azure/web-pubsub',
  '@azure/web-pubsub-client',
  '@azure/identity',
  '@azure/functions',
  'openai',
];
const sdkPath = (names: readonly string[]) => `^node_modules/(${names.map(escape).join('|')})/`;

/** Where SDK code may live in shared/: adapters, the composition root, the HTTP edge; and tests. */
const SDK_ALLOWED = '(^shared/app/|^shared/http/|/adapters/|\\.test\\.ts$)';

export const layeringRules: IForbiddenRuleType[] = [
  {
    name: 'no-cycle',
    comment:
      'No import cycles, type-only imports included: each module can be read and tested from the bottom up.',
    severity: 'error',
    from: {},
    to: { circular: true },
  },
  {
    name: 'shared-knows-no-host',
    comment: 'shared/ is the product: it never imports the Functions entry points or the local runtime.',
    severity: 'error',
    from: { path: '^shared/' },
    to: { path: '^(functions|local)/' },
  },
  {
    name: 'functions-know-no-local-runtime',
    comment: 'functions/ runs under the Functions host as it is: it never imports the local runtime.',
    severity: 'error',
    from: { path: '^functions/' },
    to: { path: '^local/' },
  },
  {
    name: 'no-sdk-in-use-cases',
    comment:
      'Use-cases, ports and contracts depend on ports, not SDKs: SDK calls live in an adapters/ folder.',
    severity: 'error',
    from: { path: '^shared/', pathNot: SDK_ALLOWED },
    to: { path: sdkPath(PLATFORM_SDKS) },
  },
  {
    name: 'durable-functions-only-in-orchestrations',
    comment: 'Orchestrators are written against durable-functions itself; other use-cases are not.',
    severity: 'error',
    from: { path: '^shared/', pathNot: `(${SDK_ALLOWED}|-orchestration\\.ts$)` },
    to: { path: sdkPath(['durable-functions']) },
  },
  {
    name: 'functions-call-use-cases-not-sdks',
    comment: 'functions/ translates triggers to use-cases; data-plane SDK clients live in shared/ adapters.',
    severity: 'error',
    from: { path: '^functions/' },
    to: { path: sdkPath(PLATFORM_SDKS.filter((name) => name !== '@azure/functions')) },
  },
  {
    name: 'adapters-only-from-composition',
    comment:
      'Another area imports a contract or a port, never an adapter: only the composition root (shared/app/) and ' +
      'other adapters build on adapters.',
    severity: 'error',
    from: { path: '^(shared|functions)/', pathNot: '(^shared/app/|/adapters/|\\.test\\.ts$)' },
    to: { path: '^shared/.+/adapters/' },
  },
  {
    name: 'contracts-stay-declarations',
    comment:
      'A contracts module declares schemas and names: it imports other contracts, the few shapes they reuse and ' +
      'the pure text rules its schemas apply, never a use-case or an adapter.',
    severity: 'error',
    from: { path: '^shared/[^/]+/contracts\\.ts$' },
    to: {
      path: '^shared/',
      pathNot:
        '(/contracts\\.ts$|^shared/cosmos/container-spec\\.ts$|^shared/llm/llm-gateway\\.ts$|^shared/errors\\.ts$|^shared/plain-text\\.ts$)',
    },
  },
];

/** The folders whose code the rules cover. */
export const LAYERED_ROOTS = ['functions', 'shared', 'local', 'scripts', 'bench', 'test'];

/** The violations of the rules in the tree under `baseDir` (resolved with its tsconfig.check.json). */
export async function checkLayering(
  baseDir: string,
  roots: readonly string[] = LAYERED_ROOTS,
): Promise<IViolation[]> {
  const cwd = process.cwd();
  process.chdir(baseDir); // dependency-cruiser resolves and names modules relative to the working directory
  try {
    const tsConfigFile = path.join(baseDir, 'tsconfig.check.json');
    const result = await cruise(
      [...roots],
      {
        validate: true,
        ruleSet: { forbidden: layeringRules },
        doNotFollow: { path: 'node_modules' },
        exclude: { path: '^(dist|test/fixtures)/' },
        tsPreCompilationDeps: true,
        // A tree may reach its packages through a linked node_modules (the rules' own test does).
        preserveSymlinks: true,
        tsConfig: { fileName: tsConfigFile },
      },
      undefined,
      { tsConfig: extractTSConfig(tsConfigFile) },
    );
    if (typeof result.output === 'string') throw new Error('dependency-cruiser returned text, not a result');
    return result.output.summary.violations;
  } finally {
    process.chdir(cwd);
  }
}

export function describeViolation(violation: IViolation): string {
  const via = violation.cycle?.map((step) => step.name).join(' → ');
  return `${violation.rule.name}: ${violation.from} → ${violation.to}${via ? ` (cycle: ${via})` : ''}`;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

async function main(): Promise<void> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const violations = await checkLayering(root);
  for (const violation of violations) console.error(describeViolation(violation));
  if (violations.length > 0) {
    console.error(`${violations.length} layering violation(s); the rules are in scripts/check-layering.ts.`);
    process.exit(1);
  }
  console.log(
    'Layering: no cycles, no SDK in a use-case, shared/ knows no host, adapters only from composition.',
  );
}

const invokedDirectly =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) await main();
