// The layering rules hold for the code as it is, and each of them fires on a small tree that breaks it (so a
// rule that could never fail would show here).
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AREA_FLOORS,
  areaMatrixRules,
  checkItemAccess,
  checkLayering,
  describeItemAccess,
  describeViolation,
  ITEM_ACCESS_RULE,
  LAYERED_ROOTS,
  layeringRules,
  ROOM_FLOORS,
  roomOrderRules,
  SHARED_ROOT,
} from '../../scripts/check-layering.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

describe('the layering of this repository', () => {
  it('has no import cycle, no SDK in a use-case, no host in shared/ and no adapter outside composition', async () => {
    const violations = await checkLayering(repoRoot);
    expect(violations.map(describeViolation)).toEqual([]);
  });

  it("shows docs/architecture.md's area matrix as scripts/check-layering.ts declares it", async () => {
    const doc = await readFile(path.join(repoRoot, 'docs/architecture.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d+) +\| ([^|]+)\|/gm)].map((row) =>
      (row[2] ?? '')
        .split(',')
        .map((area) => area.trim().replace(/`/g, ''))
        .filter((area) => area !== ''),
    );
    expect(rows).toEqual(AREA_FLOORS.map((floor) => [...floor]));
  });

  it('reaches Cosmos DB items only through the guarded accessor', async () => {
    expect((await checkItemAccess(repoRoot)).map(describeItemAccess)).toEqual([]);
  });
});

describe('each layering rule', () => {
  let tree: string;

  /** One file per area below the top floor (shared/'s own files aside), each importing the top area. */
  const reachingUp = AREA_FLOORS.slice(1)
    .flat()
    .filter((area) => area !== SHARED_ROOT)
    .map((area) => [`shared/${area}/reaches-up.ts`, `area-matrix-${area}`] as const);

  /** One file per room below the tests, each importing a file of the tests' own folder. */
  const roomsReachingUp = ROOM_FLOORS.slice(1)
    .flat()
    .map((room) => [`${room}/reaches-up.ts`, `room-order-${room.replace('/', '-')}`] as const);

  /** Files of a small project, each breaking one rule (and nothing else). */
  const files: Record<string, string> = {
    // no-cycle
    'shared/loop/first.ts': "import { second } from './second.js';\nexport const first = () => second;\n",
    'shared/loop/second.ts':
      "import type { first } from './first.js';\nexport const second = (f?: typeof first) => f;\n",
    // the order of rooms: the product knows no host, the Functions entry points know no local runtime, each room
    // below the tests reaches up to them once, a peer on the same floor; and what the order allows: a downward
    // import, a test file that assembles rooms
    'shared/knows-host.ts': "import { hosted } from '../local/host.js';\nexport const x = hosted;\n",
    'local/host.ts': 'export const hosted = 1;\n',
    'functions/uses-local.ts': "import { hosted } from '../local/host.js';\nexport const y = hosted;\n",
    'test/e2e/steps.ts': 'export const step = 1;\n',
    ...Object.fromEntries(
      roomsReachingUp.map(([file]) => [
        file,
        `import { step } from '${path.posix.relative(path.posix.dirname(file), 'test/e2e/steps.js')}';\n` +
          'export const up = step;\n',
      ]),
    ),
    'web/sideways.ts': "import { hosted } from '../functions/uses-local.js';\nexport const w = hosted;\n",
    'web/build.js': 'export const build = () => 1;\n',
    'bench/measure.ts': "import { build } from '../web/build.js';\nexport const m = build;\n",
    'scripts/command.ts': "import { m } from '../bench/measure.js';\nexport const c = m;\n",
    'local/server.test.ts': "import { step } from '../test/e2e/steps.js';\nexport const t = step;\n",
    // no-sdk-in-use-cases
    'shared/chat/use-case.ts':
      "import type { Container } from '@azure/cosmos';\nexport type C = Container;\n",
    // durable-functions-only-in-orchestrations
    'shared/chat/steps.ts': "import type * as df from 'durable-functions';\nexport type T = df.Task;\n",
    'shared/chat/turn-orchestration.ts':
      "import type * as df from 'durable-functions';\nexport type U = df.Task;\n",
    // functions-call-use-cases-not-sdks
    'functions/uses-sdk.ts':
      "import type { CosmosClient } from '@azure/cosmos';\nexport type D = CosmosClient;\n",
    // adapters-only-from-composition
    'shared/chat/adapters/cosmos-store.ts':
      "import type { Container } from '@azure/cosmos';\nexport type S = Container;\n",
    'functions/uses-adapter.ts':
      "import type { S } from '../shared/chat/adapters/cosmos-store.js';\nexport type E = S;\n",
    'shared/app/app.ts': "import type { S } from '../chat/adapters/cosmos-store.js';\nexport type F = S;\n",
    // contracts-stay-declarations
    'shared/memory/contracts.ts': "import { z } from '../chat/use-case-helper.js';\nexport const m = z;\n",
    'shared/chat/use-case-helper.ts': 'export const z = 1;\n',
    // items-only-through-the-guard: a call however it is written, and what does not count
    'shared/memory/adapters/cosmos-facts.ts':
      'type C = { item(id: string, pk: string): { delete(): Promise<void> } };\n' +
      "export const drop = (container: C, id: string) =>\n  container\n    .item(id, 'u')\n    .delete();\n",
    'functions/reads-item.ts':
      "export const read = (c?: { item(id: string): unknown }) => c?.item('x');\n" +
      "// c.item('in a comment') and 'c.item(in a string)' are not calls\nexport const text = 'c.item(';\n",
    'local/element-access.ts':
      "export const del = (c: Record<string, (id: string) => unknown>) => c['item']('..');\n" +
      "export const field = (event: { item: unknown }) => event['item'];\n",
    'shared/cosmos/adapters/guarded-item.ts':
      'export const guardedItem = (c: { item(id: string): unknown }, id: string) => c.item(id);\n',
    // deployed-code-uses-production-packages (the tree's package.json makes ws a devDependency)
    'shared/streaming/uses-dev-package.ts': "import { WebSocket } from 'ws';\nexport const W = WebSocket;\n",
    'shared/streaming/types-from-dev-package.ts':
      "import type { WebSocket } from 'ws';\nexport type V = WebSocket;\n",
    'shared/streaming/feed.test.ts': "import { WebSocket } from 'ws';\nexport const T = WebSocket;\n",
    'local/uses-dev-package.ts': "import { WebSocket } from 'ws';\nexport const L = WebSocket;\n",
    // the area matrix: each area below the top reaches up to it once (reachingUp below); a peer on the same floor,
    // an area outside the matrix; and what the matrix allows: a downward import, a test that assembles areas
    'shared/app/top.ts': 'export const top = 1;\n',
    ...Object.fromEntries(
      reachingUp.map(([file]) => [file, "import { top } from '../app/top.js';\nexport const up = top;\n"]),
    ),
    'shared/matrix-up.ts': "import { top } from './app/top.js';\nexport const up = top;\n",
    'shared/messaging/peer.ts': 'export const peer = 1;\n',
    'shared/llm/sideways.ts': "import { peer } from '../messaging/peer.js';\nexport const side = peer;\n",
    'shared/outside/unplaced.ts': "import { top } from '../app/top.js';\nexport const o = top;\n",
    'shared/conversation/kernel.ts': "import { peer } from '../messaging/peer.js';\nexport const k = peer;\n",
    'shared/history/downward.ts': "import { k } from '../conversation/kernel.js';\nexport const d = k;\n",
    'shared/conversation/assembles.test.ts': "import { top } from '../app/top.js';\nexport const a = top;\n",
  };

  beforeAll(async () => {
    tree = await mkdtemp(path.join(tmpdir(), 'layering-'));
    await symlink(path.join(repoRoot, 'node_modules'), path.join(tree, 'node_modules'), 'dir');
    await writeFile(
      path.join(tree, 'package.json'),
      JSON.stringify({
        dependencies: { '@azure/cosmos': '*', 'durable-functions': '*' },
        devDependencies: { ws: '*' },
      }),
    );
    await writeFile(
      path.join(tree, 'tsconfig.check.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true },
        include: ['**/*.ts'],
      }),
    );
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(tree, file)), { recursive: true });
      await writeFile(path.join(tree, file), text);
    }
  });
  afterAll(async () => {
    if (tree) await rm(tree, { recursive: true, force: true });
  });

  it('fires where the tree breaks it, and only there', async () => {
    const found = (await checkLayering(tree, LAYERED_ROOTS)).map((v) => [v.rule.name, v.from, v.to]);
    expect(found).toEqual(
      expect.arrayContaining([
        ['no-cycle', 'shared/loop/first.ts', 'shared/loop/second.ts'],
        ['room-order-shared', 'shared/knows-host.ts', 'local/host.ts'],
        ['room-order-functions', 'functions/uses-local.ts', 'local/host.ts'],
        ...roomsReachingUp.map(([file, rule]) => [rule, file, 'test/e2e/steps.ts']),
        ['room-order-web', 'web/sideways.ts', 'functions/uses-local.ts'],
        [
          'no-sdk-in-use-cases',
          'shared/chat/use-case.ts',
          expect.stringMatching(/^node_modules\/@azure\/cosmos\//),
        ],
        [
          'durable-functions-only-in-orchestrations',
          'shared/chat/steps.ts',
          expect.stringMatching(/^node_modules\/durable-functions\//),
        ],
        [
          'functions-call-use-cases-not-sdks',
          'functions/uses-sdk.ts',
          expect.stringMatching(/^node_modules\/@azure\/cosmos\//),
        ],
        [
          'adapters-only-from-composition',
          'functions/uses-adapter.ts',
          'shared/chat/adapters/cosmos-store.ts',
        ],
        ['contracts-stay-declarations', 'shared/memory/contracts.ts', 'shared/chat/use-case-helper.ts'],
        [
          'deployed-code-uses-production-packages',
          'shared/streaming/uses-dev-package.ts',
          expect.stringMatching(/^node_modules\/ws\//),
        ],
        ...reachingUp.map(([file, rule]) => [rule, file, 'shared/app/top.ts']),
        ['area-matrix-shared-root', 'shared/matrix-up.ts', 'shared/app/top.ts'],
        ['area-matrix-llm', 'shared/llm/sideways.ts', 'shared/messaging/peer.ts'],
        ['areas-are-in-the-matrix', 'shared/outside/unplaced.ts', 'shared/app/top.ts'],
      ]),
    );
    // Each area but the top one has its rule, and each rule fires once per file that breaks it, naming the import.
    expect(areaMatrixRules).toHaveLength(AREA_FLOORS.flat().length - 1);
    expect(roomOrderRules).toHaveLength(ROOM_FLOORS.flat().length - 1);
    // Every rule is exercised above...
    expect(new Set(found.map(([rule]) => rule))).toEqual(new Set(layeringRules.map((rule) => rule.name)));
    // ...and what the rules allow passes: an orchestrator on durable-functions, an adapter on its SDK, the
    // composition root on an adapter, and a devDependency in a type-only import, a test or the local runtime.
    const allowedFrom = [
      'shared/chat/turn-orchestration.ts',
      'shared/chat/adapters/cosmos-store.ts',
      'shared/app/app.ts',
      'shared/streaming/types-from-dev-package.ts',
      'shared/streaming/feed.test.ts',
      'local/uses-dev-package.ts',
      'shared/conversation/kernel.ts',
      'shared/history/downward.ts',
      'shared/conversation/assembles.test.ts',
      'bench/measure.ts',
      'scripts/command.ts',
      'local/server.test.ts',
    ];
    expect(found.filter(([, from]) => allowedFrom.includes(String(from)))).toEqual([]);
  });

  it(`${ITEM_ACCESS_RULE.name} finds every .item( call outside the accessor, split over lines or not`, async () => {
    const found = await checkItemAccess(tree);
    expect(found.map(({ file, line }) => `${file}:${line}`)).toEqual([
      'shared/memory/adapters/cosmos-facts.ts:4',
      'functions/reads-item.ts:1',
      'local/element-access.ts:1',
    ]);
    expect(new Set(found.map((violation) => violation.rule))).toEqual(new Set([ITEM_ACCESS_RULE.name]));
  });
});
