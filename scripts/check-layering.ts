// The layering rules, checked by dependency-cruiser over the real import graph (type-only imports included), and
// one over the source: a Cosmos DB item is reached only through the guarded accessor. Run by `npm run layers`;
// test/contract/layering.test.ts shows that every rule fires on a tree that breaks it.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type IForbiddenRuleType, type IViolation } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import ts from 'typescript';

/** The SDKs of the platform: only adapters, the composition root and the trigger edge may import them. */
const PLATFORM_SDKS = [
  '@azure/cosmos',
  '@azure/service-bus',
  '@azure/web-pubsub',
  '@azure/web-pubsub-client',
  '@azure/identity',
  '@azure/functions',
  '@azure/storage-blob',
  'openai',
  'sharp',
];
const sdkPath = (names: readonly string[]) => `^node_modules/(${names.map(escape).join('|')})/`;

/** Where SDK code may live in shared/: adapters, the composition root, the HTTP edge; and tests. */
const SDK_ALLOWED = '(^shared/app/|^shared/http/|/adapters/|\\.test\\.ts$)';

/**
 * The modules that only declare schemas, names and ports' shapes: each area's contracts (one file, or a contracts/
 * folder split by boundary) and the conversation kernel's declarations.
 */
const CONTRACT_MODULES =
  '(^shared/[^/]+/contracts\\.ts$|^shared/[^/]+/contracts/[^/]+\\.ts$|' +
  '^shared/conversation/(branches|messages|message-completed|sources|turn-ids|session-store|posted-message-store|' +
  'memory-mode|memory-scope|conversation-shape)\\.ts$)';

/** shared/'s own files (errors, ids, logger, validation, ...), on the bottom floor of the matrix. */
export const SHARED_ROOT = 'shared/*.ts';

/**
 * The area matrix: the folders of shared/, top floor first. An area imports only areas on the floors below its own,
 * never one on its own floor or above; what two areas both need moves down (into the conversation kernel) rather
 * than one importing the other. Tests may assemble any areas. docs/architecture.md shows the same table.
 */
export const AREA_FLOORS: readonly (readonly string[])[] = [
  ['app'],
  ['openai-api'],
  ['chat'],
  ['tools', 'sharing', 'mcp', 'assistants', 'projects', 'account'],
  ['history'],
  ['memory'],
  ['streaming'],
  ['knowledge', 'attachments'],
  ['usage'],
  ['conversation'],
  ['quota'],
  ['http', 'models', 'api-keys'],
  ['identity', 'cosmos', 'llm', 'messaging', 'durable'],
  ['search'],
  // Tracing and metrics helpers: low, so every area may instrument itself.
  ['telemetry'],
  ['settings'],
  [SHARED_ROOT],
];

/** The areas `area` may import: every area on a floor below its own. */
export function importableAreas(area: string): string[] {
  const level = AREA_FLOORS.findIndex((floor) => floor.includes(area));
  if (level < 0) throw new Error(`${area} is not in the area matrix`);
  return AREA_FLOORS.slice(level + 1).flat();
}

const areaPath = (area: string) =>
  area === SHARED_ROOT ? '^shared/[^/]+\\.ts$' : `^shared/${escape(area)}/`;
const MATRIX_AREAS = AREA_FLOORS.flat().filter((area) => area !== SHARED_ROOT);

/** One rule per area (but the top one, which may import them all): nothing on its floor or above. */
export const areaMatrixRules: IForbiddenRuleType[] = AREA_FLOORS.flatMap((floor, level) =>
  floor.flatMap((area): IForbiddenRuleType[] => {
    const notBelow = AREA_FLOORS.slice(0, level + 1)
      .flat()
      .filter((other) => other !== area);
    if (notBelow.length === 0) return [];
    const below = importableAreas(area);
    return [
      {
        name: `area-matrix-${area === SHARED_ROOT ? 'shared-root' : area}`,
        comment:
          `${area} imports only the areas below it in the matrix (${below.length > 0 ? below.join(', ') : 'none'}): ` +
          'what an area above also needs moves down, or the area declares a port that the composition root fills.',
        severity: 'error',
        from: { path: areaPath(area), pathNot: '\\.test\\.ts$' },
        to: {
          path: `^shared/(${notBelow
            .filter((other) => other !== SHARED_ROOT)
            .map(escape)
            .join('|')})/`,
        },
      },
    ];
  }),
);

/**
 * The rooms of the repository, top floor first. A room imports only the rooms below its floor, so no arrow runs back
 * up: the product (shared/) is the ground; the Functions entry points and the web client stand on it; the local
 * runtime hosts them; test support, the benches and the repository's commands drive it; the tests stand on top.
 * What two rooms both need moves down (the web client's build lives in web/); a test file anywhere may assemble any.
 */
export const ROOM_FLOORS: readonly (readonly string[])[] = [
  ['test'],
  ['scripts'],
  ['bench'],
  ['test/support'],
  ['local'],
  ['functions', 'web'],
  ['shared'],
];

/** A room's files: `test` is the tests' own folder without test/support/, which is a room of its own. */
const roomPath = (room: string) => (room === 'test' ? '^test/(?!support/)' : `^${escape(room)}/`);

/** One rule per room (but the top one): it imports nothing on its own floor or above. */
export const roomOrderRules: IForbiddenRuleType[] = ROOM_FLOORS.flatMap((floor, level) =>
  floor.flatMap((room): IForbiddenRuleType[] => {
    const notBelow = ROOM_FLOORS.slice(0, level + 1)
      .flat()
      .filter((other) => other !== room);
    if (notBelow.length === 0) return [];
    const below = ROOM_FLOORS.slice(level + 1).flat();
    return [
      {
        name: `room-order-${room.replace('/', '-')}`,
        comment:
          `${room}/ imports only the rooms below it (${below.length > 0 ? below.join(', ') : 'none'}): what a room ` +
          'above also needs moves down into a room both can import.',
        severity: 'error',
        from: { path: roomPath(room), pathNot: '\\.test\\.ts$' },
        to: { path: `(${notBelow.map(roomPath).join('|')})` },
      },
    ];
  }),
);

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
      "A contracts module (an area's contracts.ts or contracts/*.ts, and the kernel's declaration modules) declares " +
      'schemas and names: it imports other contracts, the few shapes they reuse and the pure text rules its ' +
      'schemas apply, never a use-case or an adapter.',
    severity: 'error',
    from: { path: CONTRACT_MODULES },
    to: {
      path: '^shared/',
      pathNot:
        `(${CONTRACT_MODULES}|^shared/cosmos/container-spec\\.ts$|^shared/llm/llm-gateway\\.ts$|^shared/errors\\.ts$|` +
        '^shared/ids\\.ts$|^shared/message-attachments\\.ts$|^shared/plain-text\\.ts$)',
    },
  },
  {
    name: 'deployed-code-uses-production-packages',
    comment:
      'functions/ and shared/ are what the function app runs, and its package installs `dependencies` only ' +
      '(npm ci --omit=dev): they never import a devDependency (the local runtime and the tests have theirs) or a ' +
      'package that package.json does not name. Type-only imports are erased at build time.',
    severity: 'error',
    from: { path: '^(functions|shared)/', pathNot: '\\.test\\.ts$' },
    to: {
      dependencyTypes: ['npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
      dependencyTypesNot: ['type-only'],
    },
  },
  {
    name: 'areas-are-in-the-matrix',
    comment: 'Every folder of shared/ that imports another is placed in the area matrix (AREA_FLOORS).',
    severity: 'error',
    from: { path: '^shared/[^/]+/', pathNot: `^shared/(${MATRIX_AREAS.map(escape).join('|')})/` },
    to: { path: '^shared/' },
  },
  ...areaMatrixRules,
  ...roomOrderRules,
];

/** The folders whose code the rules cover. */
export const LAYERED_ROOTS = ['functions', 'shared', 'local', 'scripts', 'bench', 'test', 'web'];

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

// --- Item access --------------------------------------------------------------------------------------------

/**
 * The SDK puts an item's id in the request URL, where `.` or `..` resolves to the container itself: only the guarded
 * accessor, which refuses such ids, may call `Container.item(...)`.
 */
export const ITEM_ACCESS_RULE = {
  name: 'items-only-through-the-guard',
  comment:
    'A Cosmos DB item is reached only through guardedItem (shared/cosmos/adapters/guarded-item.ts): `.item(` ' +
    'anywhere else could send an id that collapses the URL to the container.',
};

/** The one module that may call `.item(`. */
export const ITEM_ACCESSOR_MODULE = 'shared/cosmos/adapters/guarded-item.ts';

/** The folders of product code, where item access is checked (tests reach the local server's items as they like). */
export const ITEM_ACCESS_ROOTS = ['shared', 'functions', 'local'];

export interface ItemAccessViolation {
  rule: string;
  /** The file, relative to the tree, and the line (1-based) of the call. */
  file: string;
  line: number;
}

/**
 * Every call of a method named `item` (`x.item(`, `x?.item(`, `x['item'](`, however it is split over lines) in the
 * TypeScript files under `roots`, except in the accessor's module. Read from the syntax tree, so comments and strings
 * that mention it do not count.
 */
export async function checkItemAccess(
  baseDir: string,
  roots: readonly string[] = ITEM_ACCESS_ROOTS,
): Promise<ItemAccessViolation[]> {
  const violations: ItemAccessViolation[] = [];
  for (const root of roots)
    for (const file of await typeScriptFiles(baseDir, root)) {
      if (file === ITEM_ACCESSOR_MODULE) continue;
      const source = ts.createSourceFile(
        file,
        await readFile(path.join(baseDir, file), 'utf8'),
        ts.ScriptTarget.Latest,
      );
      const visit = (node: ts.Node): void => {
        const name = ts.isCallExpression(node) ? calledName(node.expression) : undefined;
        if (name?.text === 'item')
          violations.push({
            rule: ITEM_ACCESS_RULE.name,
            file,
            line: source.getLineAndCharacterOfPosition(name.getStart(source)).line + 1,
          });
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
  return violations;
}

/** The method's name in a call's callee (`x.name`, `x?.name`, `x['name']`), as a node of the tree. */
function calledName(
  callee: ts.Expression,
): { text: string; getStart(source: ts.SourceFile): number } | undefined {
  if (ts.isPropertyAccessExpression(callee)) return callee.name;
  if (ts.isElementAccessExpression(callee) && ts.isStringLiteralLike(callee.argumentExpression))
    return callee.argumentExpression;
  return undefined;
}

/** The .ts files under `root` (relative to `baseDir`, with '/'), sorted; none when the folder is absent. */
async function typeScriptFiles(baseDir: string, root: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(path.join(baseDir, root), { recursive: true, withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.relative(baseDir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .filter((file) => !file.split('/').includes('node_modules'))
    .sort();
}

export function describeItemAccess(violation: ItemAccessViolation): string {
  return `${violation.rule}: ${violation.file}:${violation.line} calls .item( (use guardedItem)`;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

async function main(): Promise<void> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const violations = [
    ...(await checkLayering(root)).map(describeViolation),
    ...(await checkItemAccess(root)).map(describeItemAccess),
  ];
  for (const violation of violations) console.error(violation);
  if (violations.length > 0) {
    console.error(`${violations.length} layering violation(s); the rules are in scripts/check-layering.ts.`);
    process.exit(1);
  }
  console.log(
    'Layering: no cycles, rooms and areas import only those below them, no SDK in a use-case, ' +
      'adapters only from composition, items only through the guard.',
  );
}

const invokedDirectly =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) await main();
