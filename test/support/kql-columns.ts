// Which columns a KQL query reads from its table, without a Kusto parser: enough to hold the workbook's and the log
// alerts' queries to the published schema of the tables they read (a misspelt or missing column fails the test).
import { readFileSync } from 'node:fs';

/** Columns of each Log Analytics table, as the Azure Monitor Logs reference lists them. */
export type TableSchemas = Record<string, readonly string[]>;

export function loadTableSchemas(file: string): TableSchemas {
  return (JSON.parse(readFileSync(file, 'utf8')) as { tables: TableSchemas }).tables;
}

export interface ColumnReads {
  /** The table the query starts from. */
  table: string;
  /** Capitalised names it reads that it does not define itself: column names, by this project's habit. */
  columns: string[];
}

/**
 * The table a query starts from and the columns it reads. Names the query defines (`extend X =`, `by X =`,
 * `(A, B) =`) are its own; string literals, workbook parameters (`{TimeRange:grain}`) and members after a dot
 * (`Usage.costUsd`) are not columns. Kusto's functions and operators are lower-case, so only capitalised names count.
 */
export function columnsRead(query: string): ColumnReads {
  const code = query
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '1h')
    .replace(/\/\/.*$/gm, '');
  const table = /^\s*([A-Za-z_]\w*)/.exec(code)?.[1] ?? '';
  const defined = new Set<string>([table]);
  for (const match of code.matchAll(/\b([A-Za-z_]\w*)\s*=(?!=)/g)) defined.add(match[1]!);
  for (const match of code.matchAll(/\(\s*(\w+(?:\s*,\s*\w+)*)\s*\)\s*=(?!=)/g))
    for (const name of match[1]!.split(',')) defined.add(name.trim());
  const read = [...code.matchAll(/(?<![\w.])([A-Z]\w*)/g)].map((match) => match[1]!);
  return { table, columns: [...new Set(read.filter((name) => !defined.has(name)))] };
}

/** `table.column` for each column a query reads that its table does not have (or the table, when unknown). */
export function unknownColumns(query: string, schemas: TableSchemas): string[] {
  const { table, columns } = columnsRead(query);
  const known = schemas[table];
  if (known === undefined) return [`${table} (no such table in the schemas)`];
  return columns.filter((column) => !known.includes(column)).map((column) => `${table}.${column}`);
}
