// The local Cosmos DB server's request router, taken from @vercel/cosmosdb-server, with its query engine
// (@zeit/cosmosdb-query) made linear where it copied arrays once per element.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { loadDefault, type CosmosAccount } from './cosmosdb-server-internals.js';

export type RouteParams = Readonly<Record<string, string | undefined>>;

type RouteHandler = (
  account: CosmosAccount,
  req: IncomingMessage,
  res: ServerResponse,
  params: RouteParams,
) => unknown;

/** Finds the handler for a request, or undefined when no route matches. */
export type Router = (req: IncomingMessage) => [RouteParams, RouteHandler] | undefined;
export function loadRouter(): Router {
  useLinearStripUndefined();
  useLinearFromClause();
  return loadDefault<Router>('@vercel/cosmosdb-server/lib/routes.js');
}

/**
 * The query engine (@zeit/cosmosdb-query, which the package runs every query with) copies each query result
 * through `stripUndefined`, whose array branch rebuilds the array once per element: quadratic in an array's
 * length, ~6 ms per document holding a 1,536-number embedding, so reading 100 summaries took 0.6 s. This swaps in
 * a linear function with the same result (undefined dropped from arrays and objects, everything else copied). The
 * engine calls it through its helpers module's exports, so replacing the export reaches every caller.
 */
function useLinearStripUndefined(): void {
  const enginePath = resolveEngineModule('helpers');
  const helpers = require(enginePath) as { stripUndefined?: (value: unknown) => unknown };
  if (typeof helpers.stripUndefined !== 'function')
    throw new Error(
      "@zeit/cosmosdb-query's helpers have no stripUndefined: the engine's layout has changed.",
    );
  helpers.stripUndefined = stripUndefined;
}

/**
 * The query engine compiles a FROM clause into `collection.reduce(($, c) => [...$, { c }], [])`, which copies the
 * accumulated array once per document: quadratic in a partition's size (0.3 s for 10,000 documents, per query).
 * This rewrites each such accumulator step in the compiled program into `($.push(...), $)`, the same result in
 * linear time; the accumulator is always the reduce's own fresh `[]`, so pushing onto it changes nothing else. (A
 * JOIN's step pushes a document's array as spread arguments: fine for any array a 2 MB document holds in practice.)
 */
function useLinearFromClause(): void {
  const enginePath = resolveEngineModule('transformer');
  const transformer = require(enginePath) as { default?: (sqlAst: unknown) => unknown };
  const transform = transformer.default;
  if (typeof transform !== 'function')
    throw new Error(
      "@zeit/cosmosdb-query's transformer has no default export: the engine's layout has changed.",
    );
  if ((transform as { linearFrom?: boolean }).linearFrom === true) return;
  const linear = (sqlAst: unknown) => {
    const program = transform(sqlAst);
    rewriteReduceSteps(program);
    return program;
  };
  transformer.default = Object.assign(linear, { linearFrom: true });
}

type JsNode = Record<string, unknown> & { type?: unknown };

/** Rewrites, anywhere in the program, a reducer `($, x) => [...$, a, ...b]` (or `cond ? [...$, a] : $`). */
function rewriteReduceSteps(node: unknown): void {
  if (Array.isArray(node)) {
    for (const child of node) rewriteReduceSteps(child);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const js = node as JsNode;
  if (js.type === 'CallExpression' && isReduceCall(js)) {
    const reducer = (js.arguments as JsNode[] | undefined)?.[0];
    if (reducer?.type === 'ArrowFunctionExpression' && isAccumulator((reducer.params as JsNode[])[0])) {
      const body = reducer.body as JsNode;
      if (body.type === 'ConditionalExpression') body.consequent = pushStep(body.consequent as JsNode);
      else reducer.body = pushStep(body);
    }
  }
  for (const value of Object.values(js)) rewriteReduceSteps(value);
}

function isReduceCall(call: JsNode): boolean {
  const callee = call.callee as JsNode | undefined;
  return callee?.type === 'MemberExpression' && (callee.property as JsNode | undefined)?.name === 'reduce';
}

function isAccumulator(node: JsNode | undefined): boolean {
  return node?.type === 'Identifier' && node.name === '$';
}

/** `[...$, a, ...b]` → `($.push(a, ...b), $)`; anything else is left as it is. */
function pushStep(expression: JsNode): JsNode {
  const elements = expression.elements as JsNode[] | undefined;
  const first = elements?.[0];
  if (
    expression.type !== 'ArrayExpression' ||
    first?.type !== 'SpreadElement' ||
    !isAccumulator(first.argument as JsNode)
  )
    return expression;
  const accumulator = () => ({ type: 'Identifier', name: '$' });
  return {
    type: 'SequenceExpression',
    expressions: [
      {
        type: 'CallExpression',
        callee: {
          type: 'MemberExpression',
          object: accumulator(),
          property: { type: 'Identifier', name: 'push' },
          computed: false,
        },
        arguments: elements?.slice(1) ?? [],
      },
      accumulator(),
    ],
  };
}

function stripUndefined(value: unknown): unknown {
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    for (const item of value as unknown[]) if (item !== undefined) kept.push(stripUndefined(item));
    return kept;
  }
  if (typeof value === 'object' && value !== null) {
    const kept: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) if (item !== undefined) kept[key] = stripUndefined(item);
    return kept;
  }
  return value;
}
// createRequire, not `import`: these are CommonJS files with an `exports.default`, and loaders differ in how
// they map that onto an ES default import.
const require = createRequire(import.meta.url);

/** A module of the query engine (@zeit/cosmosdb-query), resolved from the server package that depends on it. */
function resolveEngineModule(name: string): string {
  return require.resolve(`@zeit/cosmosdb-query/lib/${name}.js`, {
    paths: [dirname(require.resolve('@vercel/cosmosdb-server/package.json'))],
  });
}

/** A CommonJS module of the package whose functions are named exports. */
