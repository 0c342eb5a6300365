// Checks the `resource` declarations of Bicep templates against Azure's resource type definitions (the Bicep
// types that the Bicep compiler type-checks with): tree-sitter-bicep parses, the vendored definitions in
// test/fixtures/azure-resource-types judge. It also looks inside union() and concat(), where the compiler does not.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Parser from 'tree-sitter';
import Bicep from 'tree-sitter-bicep';

// --- The type definitions (Azure/bicep-types format) -----------------------------------------------------------

interface TypeRef {
  $ref: string;
}

/** ObjectTypePropertyFlags of Azure/bicep-types. */
const REQUIRED = 1;
const READ_ONLY = 2;

interface Property {
  type: TypeRef;
  flags: number;
  description?: string;
}

type BicepType =
  | {
      $type: 'ObjectType';
      name: string;
      properties?: Record<string, Property>;
      additionalProperties?: TypeRef;
    }
  | {
      $type: 'DiscriminatedObjectType';
      name: string;
      discriminator: string;
      baseProperties: Record<string, Property>;
      elements: Record<string, TypeRef>;
    }
  | { $type: 'ArrayType'; itemType: TypeRef; minLength?: number; maxLength?: number }
  | { $type: 'UnionType'; elements: TypeRef[] }
  | { $type: 'StringLiteralType'; value: string }
  | { $type: 'StringType'; minLength?: number; maxLength?: number }
  | { $type: 'IntegerType'; minValue?: number; maxValue?: number }
  | { $type: 'BooleanType' }
  | { $type: 'AnyType' }
  | { $type: 'ResourceType'; name: string; body: TypeRef; writableScopes?: number }
  | { $type: 'ResourceFunctionType' };

/** One types.json: an array whose elements refer to each other with `#/<n>`. */
class TypeFile {
  constructor(
    readonly file: string,
    private readonly types: readonly BicepType[],
  ) {}

  resolve(ref: TypeRef): BicepType {
    const match = /^#\/(\d+)$/.exec(ref.$ref);
    const type = match ? this.types[Number(match[1])] : undefined;
    if (!type) throw new Error(`${this.file}: cannot resolve ${ref.$ref}`);
    return type;
  }

  at(index: number): BicepType | undefined {
    return this.types[index];
  }
}

export interface ResourceTypeDefinition {
  /** As spelled upstream, e.g. Microsoft.Web/sites@2024-04-01. */
  name: string;
  file: TypeFile;
  body: BicepType;
}

interface IndexEntry {
  file: string;
  index: number;
  name: string;
}

/** The vendored index: `<provider/type@apiVersion, lower-cased>` → where its ResourceType is. */
export class TypeIndex {
  private readonly files = new Map<string, TypeFile>();

  private constructor(
    readonly dir: string,
    readonly entries: Readonly<Record<string, IndexEntry>>,
  ) {}

  static load(dir: string): TypeIndex {
    const index = JSON.parse(readFileSync(path.join(dir, 'index.json'), 'utf8')) as {
      resources: Record<string, IndexEntry>;
    };
    return new TypeIndex(dir, index.resources);
  }

  /** The definition of `type@apiVersion` (case-insensitive), or undefined when it is not vendored. */
  lookup(typeAndVersion: string): ResourceTypeDefinition | undefined {
    const entry = this.entries[typeAndVersion.toLowerCase()];
    if (!entry) return undefined;
    const file = this.file(entry.file);
    const resource = file.at(entry.index);
    if (resource?.$type !== 'ResourceType' || resource.name.toLowerCase() !== typeAndVersion.toLowerCase()) {
      throw new Error(`index.json: ${typeAndVersion} does not point at its ResourceType in ${entry.file}`);
    }
    return { name: resource.name, file, body: file.resolve(resource.body) };
  }

  private file(relative: string): TypeFile {
    let file = this.files.get(relative);
    if (!file) {
      const types = JSON.parse(readFileSync(path.join(this.dir, relative), 'utf8')) as BicepType[];
      file = new TypeFile(relative, types);
      this.files.set(relative, file);
    }
    return file;
  }
}

// --- Problems ------------------------------------------------------------------------------------------------------

export interface SchemaProblem {
  file: string;
  /** 1-based. */
  line: number;
  /** The resource's symbolic name. */
  resource: string;
  /** type@apiVersion as written. */
  type: string;
  /** Property path inside the resource body, e.g. `properties.locations[0].locationName`; '' for the resource. */
  path: string;
  message: string;
  /** Found in an argument of union() or concat(): a value the Bicep compiler does not check against the type. */
  insideCall: boolean;
}

export function formatProblem(problem: SchemaProblem): string {
  const where = problem.path === '' ? '' : `${problem.path}: `;
  return `${problem.file}:${problem.line}: resource ${problem.resource} '${problem.type}': ${where}${problem.message}`;
}

// --- Parsing ---------------------------------------------------------------------------------------------------------

type Node = Parser.SyntaxNode;

let parser: Parser | undefined;

function parse(text: string): Parser.Tree {
  if (!parser) {
    parser = new Parser();
    parser.setLanguage(Bicep as unknown as Parser.Language);
  }
  // The Node binding reads the text in chunks of bufferSize; the default is too small for long templates.
  return parser.parse(text, undefined, { bufferSize: Math.max(32 * 1024, text.length * 2 + 1) });
}

/** The value of a string literal, or undefined when it interpolates `${...}` (then only Azure knows it). */
function stringLiteral(node: Node): string | undefined {
  if (node.type !== 'string') return undefined;
  let value = '';
  for (const child of node.namedChildren) {
    if (child.type === 'interpolation') return undefined;
    if (child.type === 'escape_sequence') value += unescape(child.text);
    else if (child.type === 'string_content') value += child.text;
  }
  return value;
}

function unescape(sequence: string): string {
  const simple: Record<string, string> = {
    '\\\\': '\\',
    "\\'": "'",
    '\\n': '\n',
    '\\r': '\r',
    '\\t': '\t',
    '\\$': '$',
  };
  if (sequence in simple) return simple[sequence]!;
  const unicode = /^\\u\{([0-9a-fA-F]+)\}$/.exec(sequence);
  return unicode ? String.fromCodePoint(parseInt(unicode[1]!, 16)) : sequence;
}

const lineOf = (node: Node) => node.startPosition.row + 1;

/** The key of an object property as written: an identifier or a string literal; undefined when interpolated. */
function propertyKey(property: Node): { key: string; node: Node } | undefined {
  const keyNode = property.namedChildren[0];
  if (!keyNode) return undefined;
  if (keyNode.type === 'identifier' || keyNode.type === 'compatible_identifier')
    return { key: keyNode.text, node: keyNode };
  const literal = stringLiteral(keyNode);
  return literal === undefined ? undefined : { key: literal, node: keyNode };
}

/** The value node of an object property (the node after the colon). */
function propertyValue(property: Node): Node | undefined {
  const children = property.children;
  const colon = children.findIndex((child) => child.type === ':');
  return colon === -1 ? undefined : children.slice(colon + 1).find((child) => child.isNamed);
}

interface ObjectEntries {
  entries: { key: string; keyNode: Node; value: Node }[];
  /** Nested `resource` declarations (child resources). */
  childResources: Node[];
  /** False when some entry's key is not a literal or the object spreads another: its key set is not known. */
  keysKnown: boolean;
}

function objectEntries(object: Node): ObjectEntries {
  const result: ObjectEntries = { entries: [], childResources: [], keysKnown: true };
  for (const child of object.namedChildren) {
    if (child.type === 'comment' || child.type === 'decorators') continue;
    if (child.type !== 'object_property') {
      result.keysKnown = false;
      continue;
    }
    const nested = child.namedChildren.find((c) => c.type === 'resource_declaration');
    if (nested) {
      result.childResources.push(nested);
      continue;
    }
    const key = propertyKey(child);
    const value = propertyValue(child);
    if (!key || !value) {
      result.keysKnown = false;
      continue;
    }
    result.entries.push({ key: key.key, keyNode: key.node, value });
  }
  return result;
}

// --- Checking --------------------------------------------------------------------------------------------------------

/** Keys Bicep accepts on every resource body besides the type's own properties. */
const BICEP_RESOURCE_KEYWORDS = ['parent', 'scope', 'dependsOn'];

interface Context {
  file: string;
  resource: string;
  type: string;
  types: TypeFile;
  problems: SchemaProblem[];
  /** Object types being checked, to stop on a recursive definition (none of the vendored ones recurse on values). */
  depth: number;
  /**
   * Inside an argument of union(): the object is only part of the value (union merges objects deeply), so a missing
   * property may come from another argument. Unknown names and wrong values are still wrong.
   */
  partial: boolean;
  /** Inside an argument of union() or concat(). */
  inCall: boolean;
}

function report(context: Context, node: Node, propertyPath: string, message: string): void {
  context.problems.push({
    file: context.file,
    line: lineOf(node),
    resource: context.resource,
    type: context.type,
    path: propertyPath,
    message,
    insideCall: context.inCall,
  });
}

const join = (base: string, key: string) =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? (base === '' ? key : `${base}.${key}`) : `${base}['${key}']`;

/** Strips parentheses; a literal or a loop stays itself; anything else is an expression this checker skips. */
function unwrap(node: Node): Node {
  let current = node;
  while (current.type === 'parenthesized_expression' && current.namedChildren.length === 1)
    current = current.namedChildren[0]!;
  return current;
}

function describe(node: Node): string {
  switch (node.type) {
    case 'object':
      return 'an object';
    case 'array':
    case 'for_statement':
      return 'an array';
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    default:
      return node.type;
  }
}

const isLiteral = (node: Node) =>
  ['object', 'array', 'for_statement', 'string', 'number', 'boolean'].includes(node.type);

function checkValue(context: Context, raw: Node, typeRef: TypeRef, propertyPath: string): void {
  const node = unwrap(raw);
  if (node.type === 'ternary_expression') {
    // Either branch may be the value: each must fit on its own.
    for (const field of ['consequence', 'alternative']) {
      const branch = node.childForFieldName(field);
      if (branch) checkValue(context, branch, typeRef, propertyPath);
    }
    return;
  }
  if (node.type === 'call_expression') return checkCall(context, node, typeRef, propertyPath);
  if (node.type === 'null' || !isLiteral(node)) return;
  const type = context.types.resolve(typeRef);
  switch (type.$type) {
    case 'AnyType':
      return;
    case 'ObjectType':
    case 'DiscriminatedObjectType':
      if (node.type !== 'object') return mismatch(context, node, propertyPath, `an object (${type.name})`);
      return checkObject(context, node, type, propertyPath, { checkRequired: !context.partial });
    case 'ArrayType':
      if (node.type === 'for_statement') {
        const body = node.childForFieldName('body');
        if (body) checkValue(context, body, type.itemType, `${propertyPath}[for]`);
        return;
      }
      if (node.type !== 'array') return mismatch(context, node, propertyPath, 'an array');
      node.namedChildren
        .filter((item) => item.type !== 'comment' && item.type !== 'decorators')
        .forEach((item, i) => checkValue(context, item, type.itemType, `${propertyPath}[${i}]`));
      return;
    case 'UnionType':
      return checkUnion(context, node, type.elements, propertyPath);
    case 'StringLiteralType': {
      if (node.type !== 'string') return mismatch(context, node, propertyPath, `'${type.value}'`);
      const value = stringLiteral(node);
      if (value !== undefined && value !== type.value)
        report(context, node, propertyPath, `'${value}' must be '${type.value}'`);
      return;
    }
    case 'StringType': {
      if (node.type !== 'string') return mismatch(context, node, propertyPath, 'a string');
      const value = stringLiteral(node);
      if (value === undefined) return;
      if (type.minLength !== undefined && value.length < type.minLength)
        report(context, node, propertyPath, `'${value}' is shorter than ${type.minLength} characters`);
      if (type.maxLength !== undefined && value.length > type.maxLength)
        report(context, node, propertyPath, `'${value}' is longer than ${type.maxLength} characters`);
      return;
    }
    case 'IntegerType': {
      if (node.type !== 'number') return mismatch(context, node, propertyPath, 'an integer');
      const value = Number(node.text);
      if (!Number.isInteger(value)) return mismatch(context, node, propertyPath, 'an integer');
      if (type.minValue !== undefined && value < type.minValue)
        report(context, node, propertyPath, `${value} is less than the minimum ${type.minValue}`);
      if (type.maxValue !== undefined && value > type.maxValue)
        report(context, node, propertyPath, `${value} is more than the maximum ${type.maxValue}`);
      return;
    }
    case 'BooleanType':
      if (node.type !== 'boolean') mismatch(context, node, propertyPath, 'a boolean');
      return;
    default:
      return;
  }
}

/**
 * union(a, b, ...) and concat(a, b, ...) build their value from their arguments, so each literal argument must fit
 * the type on its own (as part of an object for union, as items of the array for concat). Any other call is skipped.
 */
function checkCall(context: Context, node: Node, typeRef: TypeRef, propertyPath: string): void {
  const name = node.childForFieldName('function')?.text;
  const args =
    node.childForFieldName('arguments')?.namedChildren.filter((arg) => arg.type !== 'comment') ?? [];
  if (name !== 'concat' && name !== 'union') return;
  const { partial, inCall } = context;
  context.partial = partial || name === 'union';
  context.inCall = true;
  try {
    for (const arg of args) checkValue(context, arg, typeRef, propertyPath);
  } finally {
    context.partial = partial;
    context.inCall = inCall;
  }
}

function mismatch(context: Context, node: Node, propertyPath: string, expected: string): void {
  report(context, node, propertyPath, `expected ${expected}, found ${describe(node)}`);
}

function checkUnion(context: Context, node: Node, elementRefs: TypeRef[], propertyPath: string): void {
  const elements = elementRefs.map((ref) => context.types.resolve(ref));
  const literals = elements.flatMap((e) => (e.$type === 'StringLiteralType' ? [e.value] : []));
  const others = elements.filter((e) => e.$type !== 'StringLiteralType');
  if (others.length > 0) {
    // An open enum (any string fits) or a union of other kinds of types: only a non-string in a string-only
    // union is certainly wrong.
    if (node.type !== 'string' && others.every((e) => e.$type === 'StringType'))
      mismatch(context, node, propertyPath, 'a string');
    return;
  }
  if (node.type !== 'string') return mismatch(context, node, propertyPath, `one of ${quoteAll(literals)}`);
  const value = stringLiteral(node);
  if (value === undefined || literals.includes(value)) return;
  const sameButCase = literals.find((literal) => literal.toLowerCase() === value.toLowerCase());
  report(
    context,
    node,
    propertyPath,
    sameButCase
      ? `'${value}' differs in case from the allowed value '${sameButCase}'`
      : `'${value}' is not one of ${quoteAll(literals)}`,
  );
}

const quoteAll = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

interface ObjectCheck {
  checkRequired: boolean;
  /** Keys Bicep adds to this object (the resource keywords at the top of a body). */
  extraKeys?: readonly string[];
  /** Only report unknown keys (for `existing` resources). */
  keysOnly?: boolean;
}

function checkObject(
  context: Context,
  node: Node,
  type: Extract<BicepType, { $type: 'ObjectType' | 'DiscriminatedObjectType' }>,
  propertyPath: string,
  options: ObjectCheck,
): void {
  if (context.depth > 64) return;
  const { entries, keysKnown } = objectEntries(node);
  let properties: Record<string, Property>;
  let additional: TypeRef | undefined;
  let typeName = type.name;
  let discriminatorKnown = true;
  let discriminator: string | undefined;
  if (type.$type === 'DiscriminatedObjectType') {
    discriminator = type.discriminator;
    const entry = entries.find((e) => e.key === type.discriminator);
    const value = entry ? stringLiteral(unwrap(entry.value)) : undefined;
    const elementRef = value !== undefined ? type.elements[value] : undefined;
    if (entry && value !== undefined && !elementRef) {
      report(
        context,
        entry.value,
        join(propertyPath, type.discriminator),
        `'${value}' is not one of ${quoteAll(Object.keys(type.elements))}`,
      );
    }
    if (elementRef) {
      const element = context.types.resolve(elementRef);
      if (element.$type !== 'ObjectType') return;
      properties = { ...type.baseProperties, ...element.properties };
      additional = element.additionalProperties;
      typeName = `${type.name} (${type.discriminator} '${value}')`;
    } else {
      // Which variant applies is not known: a key is unknown only if no variant has it.
      discriminatorKnown = false;
      properties = { ...type.baseProperties };
      for (const ref of Object.values(type.elements)) {
        const element = context.types.resolve(ref);
        if (element.$type === 'ObjectType') properties = { ...element.properties, ...properties };
      }
    }
  } else {
    properties = type.properties ?? {};
    additional = type.additionalProperties;
  }

  const byLowerName = new Map(Object.keys(properties).map((name) => [name.toLowerCase(), name]));
  const extraKeys = new Set(options.extraKeys ?? []);
  context.depth++;
  for (const entry of entries) {
    const entryPath = join(propertyPath, entry.key);
    if (extraKeys.has(entry.key)) continue;
    const property = properties[entry.key];
    if (!property) {
      const otherCase = byLowerName.get(entry.key.toLowerCase());
      if (otherCase) {
        report(
          context,
          entry.keyNode,
          entryPath,
          `differs in case from the property '${otherCase}' of ${typeName}`,
        );
      } else if (additional) {
        if (!options.keysOnly) checkValue(context, entry.value, additional, entryPath);
      } else {
        const hint = closest(entry.key, [...Object.keys(properties), ...extraKeys]);
        report(
          context,
          entry.keyNode,
          entryPath,
          `is not a property of ${typeName}${hint ? ` (did you mean '${hint}'?)` : ''}`,
        );
      }
      continue;
    }
    if (options.keysOnly) continue;
    // An unknown variant was reported above; its discriminator value fits none of the merged properties.
    if (!discriminatorKnown && entry.key === discriminator) continue;
    if (property.flags & READ_ONLY) {
      report(
        context,
        entry.keyNode,
        entryPath,
        `is read-only in ${typeName}: Azure sets it, a template cannot`,
      );
      continue;
    }
    checkValue(context, entry.value, property.type, entryPath);
  }
  context.depth--;

  if (options.checkRequired && !options.keysOnly && keysKnown && discriminatorKnown) {
    const present = new Set(entries.map((e) => e.key));
    for (const [name, property] of Object.entries(properties)) {
      if (property.flags & REQUIRED && !(property.flags & READ_ONLY) && !present.has(name))
        report(context, node, join(propertyPath, name), `is required by ${typeName} but missing`);
    }
  }
}

/** The known name closest to a misspelt one (at most 2 edits away), for the hint in the message. */
function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= 2 && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length]!;
}

// --- Resource declarations -------------------------------------------------------------------------------------------

export interface ResourceDeclaration {
  symbol: string;
  /** type@apiVersion, full (a nested child resource's type is prefixed with its parent's). */
  type: string;
  existing: boolean;
  line: number;
  /** The object literal of the body, after any `for` and `if`. */
  body: Node | undefined;
}

function declarationsIn(root: Node, parentType?: string): ResourceDeclaration[] {
  const found: ResourceDeclaration[] = [];
  for (const node of root.namedChildren) {
    if (node.type !== 'resource_declaration') continue;
    found.push(...declaration(node, parentType));
  }
  return found;
}

function declaration(node: Node, parentType?: string): ResourceDeclaration[] {
  const symbol = node.namedChildren.find((c) => c.type === 'identifier')?.text ?? '(unnamed)';
  const written = stringLiteral(node.namedChildren.find((c) => c.type === 'string') ?? node) ?? '';
  const at = written.lastIndexOf('@');
  const [typeName, version] = at === -1 ? [written, ''] : [written.slice(0, at), written.slice(at + 1)];
  const fullType = parentType && !typeName.includes('/') ? `${parentType}/${typeName}` : typeName;
  const existing = node.children.some((c) => c.type === 'existing');
  let value = node.namedChildren.find((c) => ['object', 'if_statement', 'for_statement'].includes(c.type));
  if (value?.type === 'for_statement') value = value.childForFieldName('body') ?? undefined;
  if (value?.type === 'if_statement') value = value.namedChildren.find((c) => c.type === 'object');
  const body = value?.type === 'object' ? value : undefined;
  const self: ResourceDeclaration = {
    symbol,
    type: `${fullType}@${version}`,
    existing,
    line: lineOf(node),
    body,
  };
  const children = body
    ? objectEntries(body).childResources.flatMap((child) => declaration(child, fullType))
    : [];
  return [self, ...children];
}

/** Every resource declaration of a template, nested child resources included. */
export function resourceDeclarations(text: string): ResourceDeclaration[] {
  return declarationsIn(parse(text).rootNode);
}

/** Checks every resource declaration of one template. `file` is only used in the messages. */
export function checkBicep(file: string, text: string, index: TypeIndex): SchemaProblem[] {
  const tree = parse(text);
  const problems: SchemaProblem[] = [];
  if (tree.rootNode.hasError) {
    const error = tree.rootNode.descendantsOfType(['ERROR', 'MISSING'])[0] ?? tree.rootNode;
    problems.push({
      file,
      line: lineOf(error),
      resource: '(template)',
      type: '',
      path: '',
      message: `does not parse as Bicep near '${error.text.slice(0, 40)}'`,
      insideCall: false,
    });
  }
  for (const resource of declarationsIn(tree.rootNode)) {
    const definition = index.lookup(resource.type);
    const base = { file, resource: resource.symbol, type: resource.type };
    if (!definition) {
      problems.push({
        ...base,
        line: resource.line,
        path: '',
        message:
          `${resource.type} is not in the vendored type definitions (${path.basename(index.dir)}/index.json), so it ` +
          'cannot be checked: use an API version that is there, or vendor its types.json (see the README there)',
        insideCall: false,
      });
      continue;
    }
    const body = definition.body;
    if (!resource.body || (body.$type !== 'ObjectType' && body.$type !== 'DiscriminatedObjectType')) continue;
    const context: Context = {
      ...base,
      types: definition.file,
      problems,
      depth: 0,
      partial: false,
      inCall: false,
    };
    checkObject(context, resource.body, body, '', {
      checkRequired: !resource.existing,
      keysOnly: resource.existing,
      extraKeys: BICEP_RESOURCE_KEYWORDS,
    });
  }
  return problems;
}
