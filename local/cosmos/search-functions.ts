// Test-only: Cosmos DB's search functions (VectorDistance, FullTextScore, RRF, ORDER BY RANK) for the local
// server, so a test sends the very query Azure gets and compares it with the in-process ranking.
import { stem, words } from '../../shared/search/full-text.js';
import { valueAt } from './document-path.js';

/** RRF's constant: "k = 60", as the Cosmos DB docs and the original RRF paper (Cormack et al., 2009) use. */
const RRF_CONSTANT = 60;
/** BM25 as commonly defined (Robertson/Spärck Jones), with the usual k1 and b. */
const K1 = 1.2;
const B = 0.75;

type Document = Record<string, unknown>;
interface Parameter {
  name: string;
  value: unknown;
}

/** Whether the local server should answer this query here rather than with the package's engine. */
export function isSearchQuery(sql: string): boolean {
  return /\b(VectorDistance|FullTextScore|RRF)\s*\(/i.test(sql);
}

/**
 * Runs a search query over the documents in scope (the request's partition): filter, rank, cut at TOP, project.
 * Throws SearchQueryError for a query outside the grammar, which the server answers with 400.
 */
export function runSearchQuery(
  sql: string,
  parameters: readonly Parameter[],
  documents: readonly Document[],
): Document[] {
  const query = new Parser(tokenize(sql)).query();
  const values = new Map(parameters.map((parameter) => [parameter.name.toLowerCase(), parameter.value]));
  const valueOf = (operand: Operand): unknown =>
    operand.kind === 'literal' ? operand.value : requireParameter(values, operand.name);

  const inScope = documents.filter((document) =>
    query.where.every((condition) => holds(condition, document, valueOf)),
  );
  const ordered = order(query.order, inScope, valueOf);
  const top = query.top === undefined ? ordered : ordered.slice(0, query.top);
  return top.map((document) => project(query.select, document, valueOf));
}

export class SearchQueryError extends Error {
  override name = 'SearchQueryError';
}

/**
 * Whether a WHERE condition holds for a document. ARRAY_CONTAINS(array, value) is true when an item of the array
 * equals the value (a string, number or boolean: what these queries compare); its result, and so its NOT, is
 * undefined (the document is left out either way) when the first argument is not an array, or when the value is
 * undefined, as a path the document lacks is (array_contains reference: "returns undefined" for a non-array; an
 * undefined argument makes a function undefined; NOT of undefined is undefined; a WHERE clause keeps only
 * documents for which it is true). So `NOT ARRAY_CONTAINS(@ids, c.documentId)` drops a row without documentId.
 */
function holds(condition: Condition, document: Document, valueOf: ValueOf): boolean {
  const value = valueAt(document, condition.path);
  if (condition.kind === 'equals') return value === valueOf(condition.value);
  const array = valueOf(condition.array);
  if (!Array.isArray(array) || value === undefined) return false;
  return array.some((item) => item === value) !== condition.negated;
}

// --- Scoring (from the function reference) --------------------------------------------------------------------

/**
 * VectorDistance with the container's distance function, cosine here: "the similarity score", -1..1, higher means
 * more similar (vectordistance reference: for cosine the score is a similarity, not a distance).
 */
function cosine(a: readonly number[], b: readonly number[]): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  if (a.length !== b.length || aa === 0 || bb === 0) return 0;
  return ab / (Math.sqrt(aa) * Math.sqrt(bb));
}

/**
 * FullTextScore: "the BM25 score" of each document for the terms, over the documents in scope (their count,
 * average length and how many hold each term). Terms and text are compared by stem, as a full-text index does.
 */
function bm25(texts: readonly string[], terms: readonly string[]): number[] {
  const tokenized = texts.map((text) => words(text).map(stem));
  const count = tokenized.length;
  const averageLength = count === 0 ? 0 : tokenized.reduce((sum, tokens) => sum + tokens.length, 0) / count;
  const stems = terms.flatMap((term) => words(term).map(stem));
  const idf = new Map<string, number>();
  for (const term of new Set(stems)) {
    const holding = tokenized.filter((tokens) => tokens.includes(term)).length;
    idf.set(term, Math.log((count - holding + 0.5) / (holding + 0.5) + 1));
  }
  return tokenized.map((tokens) => {
    let score = 0;
    for (const term of stems) {
      let frequency = 0;
      for (const token of tokens) if (token === term) frequency++;
      if (frequency > 0) {
        const lengthRatio = averageLength === 0 ? 1 : tokens.length / averageLength;
        score +=
          ((idf.get(term) ?? 0) * (frequency * (K1 + 1))) / (frequency + K1 * (1 - B + B * lengthRatio));
      }
    }
    return score;
  });
}

/**
 * RRF: each scoring function ranks the documents (best first, rank 1; documents with equal scores share a rank
 * and the next score takes the next rank, as the @azure/cosmos gateway client does when it fuses component
 * results), and a document's fused score is Σ weight / (60 + rank), weights 1 unless given.
 */
function reciprocalRankFusion(componentScores: readonly number[][], weights: readonly number[]): number[] {
  const size = componentScores[0]?.length ?? 0;
  const fused = new Array<number>(size).fill(0);
  componentScores.forEach((scores, component) => {
    const distinct = [...new Set(scores)].sort((x, y) => y - x);
    const rankOf = new Map(distinct.map((score, index) => [score, index + 1]));
    scores.forEach((score, document) => {
      fused[document] =
        (fused[document] ?? 0) + (weights[component] ?? 1) / (RRF_CONSTANT + (rankOf.get(score) ?? 0));
    });
  });
  return fused;
}

type ValueOf = (operand: Operand) => unknown;

function scores(score: Score, documents: readonly Document[], valueOf: ValueOf): number[] {
  switch (score.kind) {
    case 'vector': {
      const query = numbers(valueOf(score.vector), 'VectorDistance');
      return documents.map((document) =>
        cosine(numbers(valueAt(document, score.path), 'a stored vector'), query),
      );
    }
    case 'text': {
      const terms = score.terms.flatMap((term) => {
        const value = valueOf(term);
        return Array.isArray(value) ? value.map(String) : [String(value)];
      });
      return bm25(
        documents.map((document) => {
          const text = valueAt(document, score.path);
          return typeof text === 'string' ? text : '';
        }),
        terms,
      );
    }
    case 'rrf':
      return reciprocalRankFusion(
        score.components.map((component) => scores(component, documents, valueOf)),
        score.weights,
      );
  }
}

/**
 * The documents best first. For RRF, equal fused scores keep the order of the first component (a tie between two
 * documents goes to the one the first function ranks higher), then the document id: the gateway client fuses the
 * components' results in the order they arrive, first component first.
 */
function order(by: Order | undefined, documents: readonly Document[], valueOf: ValueOf): Document[] {
  if (by === undefined) return [...documents];
  const main = scores(by.score, documents, valueOf);
  const first =
    by.score.kind === 'rrf' && by.score.components[0]
      ? scores(by.score.components[0], documents, valueOf)
      : main;
  const direction = by.descending ? -1 : 1;
  return documents
    .map((document, index) => ({ document, index }))
    .sort(
      (a, b) =>
        direction * ((main[a.index] ?? 0) - (main[b.index] ?? 0)) ||
        (first[b.index] ?? 0) - (first[a.index] ?? 0) ||
        String(a.document.id).localeCompare(String(b.document.id)),
    )
    .map(({ document }) => document);
}

function project(select: readonly SelectItem[], document: Document, valueOf: ValueOf): Document {
  if (select.length === 0) return document; // SELECT *
  const row: Document = {};
  for (const item of select)
    row[item.alias] =
      item.kind === 'path' ? valueAt(document, item.path) : scores(item.score, [document], valueOf)[0];
  return row;
}

// --- Parsing --------------------------------------------------------------------------------------------------

type Operand = { kind: 'literal'; value: unknown } | { kind: 'parameter'; name: string };
type Score =
  | { kind: 'vector'; path: string[]; vector: Operand }
  | { kind: 'text'; path: string[]; terms: Operand[] }
  | { kind: 'rrf'; components: Score[]; weights: number[] };
type SelectItem =
  { kind: 'path'; path: string[]; alias: string } | { kind: 'score'; score: Score; alias: string };
interface Order {
  score: Score;
  descending: boolean;
}
type Condition =
  | { kind: 'equals'; path: string[]; value: Operand }
  | { kind: 'contains'; array: Operand; path: string[]; negated: boolean };
interface Query {
  top: number | undefined;
  select: SelectItem[];
  where: Condition[];
  order: Order | undefined;
}

type Token = { type: 'word' | 'number' | 'string' | 'parameter' | 'symbol'; text: string };

function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  const pattern =
    /\s+|(@\w+)|([A-Za-z_]\w*)|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|([(),.[\]=*])/gy;
  let match: RegExpExecArray | null;
  while (pattern.lastIndex < sql.length && (match = pattern.exec(sql)) !== null) {
    const [text, parameter, word, number, string, symbol] = match;
    if (parameter) tokens.push({ type: 'parameter', text: parameter });
    else if (word) tokens.push({ type: 'word', text: word });
    else if (number) tokens.push({ type: 'number', text: number });
    else if (string) tokens.push({ type: 'string', text: string });
    else if (symbol) tokens.push({ type: 'symbol', text: symbol });
    else if (text.trim() !== '') throw new SearchQueryError(`Unexpected "${text}".`);
  }
  if (pattern.lastIndex < sql.length)
    throw new SearchQueryError(`Unexpected "${sql.slice(pattern.lastIndex, pattern.lastIndex + 10)}".`);
  return tokens;
}

class Parser {
  #at = 0;
  constructor(private readonly tokens: readonly Token[]) {}

  query(): Query {
    this.keyword('SELECT');
    let top: number | undefined;
    if (this.acceptKeyword('TOP')) top = Number(this.take('number').text);
    const select: SelectItem[] = [];
    if (!this.acceptSymbol('*')) {
      do select.push(this.selectItem());
      while (this.acceptSymbol(','));
    }
    this.keyword('FROM');
    const alias = this.take('word').text;
    const where: Condition[] = [];
    if (this.acceptKeyword('WHERE')) {
      do where.push(this.condition(alias));
      while (this.acceptKeyword('AND'));
    }
    let order: Order | undefined;
    if (this.acceptKeyword('ORDER')) {
      this.keyword('BY');
      if (this.acceptKeyword('RANK')) order = { score: this.score(alias), descending: true };
      else {
        const score = this.score(alias);
        // ORDER BY VectorDistance sorts most similar first unless told otherwise (vectordistance reference).
        const ascending = this.acceptKeyword('ASC');
        if (!ascending) this.acceptKeyword('DESC');
        order = { score, descending: !ascending };
      }
    }
    if (this.#at < this.tokens.length)
      throw new SearchQueryError(`Unexpected "${this.tokens[this.#at]?.text}".`);
    return { top, select, where, order };
  }

  private condition(alias: string): Condition {
    const negated = this.acceptKeyword('NOT');
    if (negated || this.peek()?.text.toUpperCase() === 'ARRAY_CONTAINS') {
      this.keyword('ARRAY_CONTAINS');
      this.symbol('(');
      const array = this.operand();
      this.symbol(',');
      const path = this.path(alias);
      this.symbol(')');
      return { kind: 'contains', array, path, negated };
    }
    const path = this.path(alias);
    this.symbol('=');
    return { kind: 'equals', path, value: this.operand() };
  }

  private selectItem(): SelectItem {
    const next = this.peek();
    if (next?.type === 'word' && /^(VectorDistance|FullTextScore|RRF)$/i.test(next.text)) {
      const score = this.score(undefined);
      // FullTextScore and RRF "cannot be part of a projection" (fulltextscore and rrf references).
      if (score.kind !== 'vector') throw new SearchQueryError('Only VectorDistance can be projected.');
      this.keyword('AS');
      return { kind: 'score', score, alias: this.take('word').text };
    }
    const path = this.path(undefined);
    const alias = this.acceptKeyword('AS') ? this.take('word').text : (path[path.length - 1] ?? '');
    return { kind: 'path', path, alias };
  }

  private score(alias: string | undefined): Score {
    const name = this.take('word').text.toLowerCase();
    this.symbol('(');
    let score: Score;
    if (name === 'vectordistance') {
      const path = this.path(alias);
      this.symbol(',');
      score = { kind: 'vector', path, vector: this.operand() };
    } else if (name === 'fulltextscore') {
      const path = this.path(alias);
      const terms: Operand[] = [];
      while (this.acceptSymbol(',')) terms.push(this.operand());
      if (terms.length === 0) throw new SearchQueryError('FullTextScore needs at least one term.');
      score = { kind: 'text', path, terms };
    } else if (name === 'rrf') {
      const components: Score[] = [];
      let weights: number[] = [];
      do {
        if (this.peek()?.text === '[') weights = (this.operand() as { value: number[] }).value;
        else components.push(this.score(alias));
      } while (this.acceptSymbol(','));
      score = { kind: 'rrf', components, weights };
    } else throw new SearchQueryError(`Unknown scoring function ${name}.`);
    this.symbol(')');
    return score;
  }

  /** `c.a.b`: the path after the collection alias. */
  private path(alias: string | undefined): string[] {
    const root = this.take('word').text;
    if (alias !== undefined && root !== alias) throw new SearchQueryError(`Unknown alias ${root}.`);
    const path: string[] = [];
    while (this.acceptSymbol('.')) path.push(this.take('word').text);
    if (path.length === 0) throw new SearchQueryError('Expected a property path.');
    return path;
  }

  private operand(): Operand {
    const token = this.peek();
    if (token?.type === 'parameter') {
      this.#at++;
      return { kind: 'parameter', name: token.text.toLowerCase() };
    }
    if (token?.type === 'number') {
      this.#at++;
      return { kind: 'literal', value: Number(token.text) };
    }
    if (token?.type === 'string') {
      this.#at++;
      return { kind: 'literal', value: unquote(token.text) };
    }
    if (token?.text === '[') {
      this.#at++;
      const items: unknown[] = [];
      if (!this.acceptSymbol(']')) {
        do {
          const item = this.operand();
          if (item.kind !== 'literal') throw new SearchQueryError('An array literal holds literals only.');
          items.push(item.value);
        } while (this.acceptSymbol(','));
        this.symbol(']');
      }
      return { kind: 'literal', value: items };
    }
    throw new SearchQueryError(`Expected a value, not "${token?.text ?? 'the end'}".`);
  }

  private peek(): Token | undefined {
    return this.tokens[this.#at];
  }

  private take(type: Token['type']): Token {
    const token = this.tokens[this.#at];
    if (token?.type !== type)
      throw new SearchQueryError(`Expected a ${type}, not "${token?.text ?? 'the end'}".`);
    this.#at++;
    return token;
  }

  private acceptKeyword(word: string): boolean {
    const token = this.tokens[this.#at];
    if (token?.type !== 'word' || token.text.toUpperCase() !== word) return false;
    this.#at++;
    return true;
  }

  private keyword(word: string): void {
    if (!this.acceptKeyword(word)) throw new SearchQueryError(`Expected ${word}.`);
  }

  private acceptSymbol(symbol: string): boolean {
    if (this.tokens[this.#at]?.text !== symbol || this.tokens[this.#at]?.type !== 'symbol') return false;
    this.#at++;
    return true;
  }

  private symbol(symbol: string): void {
    if (!this.acceptSymbol(symbol)) throw new SearchQueryError(`Expected "${symbol}".`);
  }
}

function unquote(literal: string): string {
  const body = literal.slice(1, -1);
  return body.replace(/\\(.)/g, '$1');
}

function requireParameter(values: ReadonlyMap<string, unknown>, name: string): unknown {
  if (!values.has(name)) throw new SearchQueryError(`The parameter ${name} has no value.`);
  return values.get(name);
}

function numbers(value: unknown, what: string): number[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'number'))
    throw new SearchQueryError(`${what} needs an array of numbers.`);
  return value;
}
