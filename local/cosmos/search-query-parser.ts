// Test-only: the grammar of the search queries the local server answers itself (VectorDistance, FullTextScore,
// RRF, ORDER BY RANK, TOP, ARRAY_CONTAINS, IS_DEFINED, a parenthesised OR), parsed into what search-functions.ts runs.

/** A query outside the grammar, or one whose parameters do not fit it: the server answers it with 400. */
export class SearchQueryError extends Error {
  override name = 'SearchQueryError';
}

// --- Parsing --------------------------------------------------------------------------------------------------

export type Operand = { kind: 'literal'; value: unknown } | { kind: 'parameter'; name: string };
export type Score =
  | { kind: 'vector'; path: string[]; vector: Operand }
  | { kind: 'text'; path: string[]; terms: Operand[] }
  | { kind: 'rrf'; components: Score[]; weights: number[] };
export type SelectItem =
  { kind: 'path'; path: string[]; alias: string } | { kind: 'score'; score: Score; alias: string };
export interface Order {
  score: Score;
  descending: boolean;
}
export type Condition =
  | { kind: 'equals'; path: string[]; value: Operand }
  | { kind: 'contains'; array: Operand; path: string[]; negated: boolean }
  | { kind: 'defined'; path: string[]; negated: boolean }
  | { kind: 'any'; conditions: Condition[] };
interface Query {
  top: number | undefined;
  select: SelectItem[];
  where: Condition[];
  order: Order | undefined;
}

type Token = { type: 'word' | 'number' | 'string' | 'parameter' | 'symbol'; text: string };

export function tokenize(sql: string): Token[] {
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

export class Parser {
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
    if (this.acceptSymbol('(')) {
      const conditions: Condition[] = [];
      do conditions.push(this.condition(alias));
      while (this.acceptKeyword('OR'));
      this.symbol(')');
      return { kind: 'any', conditions };
    }
    const negated = this.acceptKeyword('NOT');
    if (this.acceptKeyword('IS_DEFINED')) {
      this.symbol('(');
      const path = this.path(alias);
      this.symbol(')');
      return { kind: 'defined', path, negated };
    }
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
