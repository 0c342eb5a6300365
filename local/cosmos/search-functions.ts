// Test-only: Cosmos DB's search functions (VectorDistance, FullTextScore, RRF, ORDER BY RANK) for the local
// server, so a test sends the very query Azure gets and compares it with the in-process ranking.
import { stem, words } from '../../shared/search/full-text.js';
import { valueAt } from './document-path.js';
import {
  Parser,
  SearchQueryError,
  tokenize,
  type Condition,
  type Operand,
  type Order,
  type Score,
  type SelectItem,
} from './search-query-parser.js';

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

/**
 * Whether a WHERE condition holds for a document. ARRAY_CONTAINS(array, value) is true when an item of the array
 * equals the value (a string, number or boolean: what these queries compare); its result, and so its NOT, is
 * undefined (the document is left out either way) when the first argument is not an array, or when the value is
 * undefined, as a path the document lacks is (array_contains reference: "returns undefined" for a non-array; an
 * undefined argument makes a function undefined; NOT of undefined is undefined; a WHERE clause keeps only
 * documents for which it is true). So `NOT ARRAY_CONTAINS(@ids, c.documentId)` drops a row without documentId.
 */
function holds(condition: Condition, document: Document, valueOf: ValueOf): boolean {
  if (condition.kind === 'any') return condition.conditions.some((each) => holds(each, document, valueOf));
  const value = valueAt(document, condition.path);
  if (condition.kind === 'defined') return (value !== undefined) !== condition.negated;
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

function requireParameter(values: ReadonlyMap<string, unknown>, name: string): unknown {
  if (!values.has(name)) throw new SearchQueryError(`The parameter ${name} has no value.`);
  return values.get(name);
}

function numbers(value: unknown, what: string): number[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'number'))
    throw new SearchQueryError(`${what} needs an array of numbers.`);
  return value;
}
