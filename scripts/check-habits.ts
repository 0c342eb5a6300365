// Habits of the repository, checked over its files: a source file opens with at most three comment lines, a module
// (tests aside) stays within 400 lines, nothing cites notes outside the repo, and every path a doc names exists.
//   npx tsx scripts/check-habits.ts
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The longest header a source file may open with: its role, said in at most this many comment lines. */
export const MAX_HEADER_LINES = 3;

/** The longest a module (tests aside) may grow before it is split by concern. */
export const MAX_PRODUCT_FILE_LINES = 400;

/** The folders that hold code, where every module but a test keeps within that length. */
export const LENGTH_ROOTS = ['shared/', 'functions/', 'local/', 'bench/', 'scripts/', 'web/'];
const LENGTH_FILE = /\.(ts|tsx|js|mjs|cjs)$/;
const TEST_FILE = /\.test\.[cm]?[jt]sx?$/;

/** Where source files live, and what counts as one. */
const SOURCE_ROOTS = ['shared/', 'functions/', 'local/', 'scripts/', 'bench/', 'test/'];
const SOURCE_FILE = /\.(ts|js|mjs|cjs)$/;

/** The docs whose backticked paths must exist. */
const DOC_FILE = /^(README\.md|docs\/[^/]+\.md)$/;

/**
 * Citations of notes that live outside the repository (a seed note, a design note's section, a style habit by
 * number): a reader of the repo cannot open them, so the point must be said instead.
 */
const OUTSIDE_NOTES: readonly RegExp[] = [/\bseed \d+/i, /\bDESIGN(?:\.md\b| ?§)/, /\bSTYLE(?:\.md\b| \d)/];

/** File names with one of these endings are named by docs as files; a name ending in `/` is a folder. */
const PATH_ENDINGS = /\.(ts|js|mjs|cjs|json|md|bicep|yaml|yml|http|sh|html|pdf|sse|body)$/;

/** Paths a doc may name that are not the repo's: made by a build or a run, or the user's own (`.vscode/`). */
const BUILT_ROOTS = [
  'dist/',
  'node_modules/',
  '.local-data/',
  'bench/results/',
  '.deploy/',
  'coverage/',
  '.vscode/',
];

/** A bare file name (no folder) is checked only with a source ending: `cosmos.json` may be a data file's name. */
const SOURCE_NAME = /\.(ts|js|mjs|cjs|bicep)$/;

export interface HabitViolation {
  readonly file: string;
  readonly line: number;
  readonly rule: 'long-header' | 'long-file' | 'outside-note' | 'missing-path';
  readonly detail: string;
}

export function describeHabitViolation(v: HabitViolation): string {
  return `${v.file}:${v.line} ${v.rule}: ${v.detail}`;
}

/** How many comment lines a file opens with (after a shebang): one unbroken run of `//` lines or a block comment. */
export function headerLineCount(text: string): number {
  const lines = text.split('\n');
  let i = lines[0]?.startsWith('#!') ? 1 : 0;
  let count = 0;
  let inBlock = false;
  for (; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (inBlock) {
      count++;
      if (line.includes('*/')) inBlock = false;
    } else if (line.startsWith('//')) {
      count++;
    } else if (line.startsWith('/*')) {
      count++;
      inBlock = !line.includes('*/');
    } else {
      break;
    }
  }
  return count;
}

export function checkHeader(file: string, text: string): HabitViolation[] {
  if (!SOURCE_FILE.test(file) || !SOURCE_ROOTS.some((root) => file.startsWith(root))) return [];
  const count = headerLineCount(text);
  return count > MAX_HEADER_LINES
    ? [
        {
          file,
          line: 1,
          rule: 'long-header',
          detail: `opens with ${count} comment lines; keep its role in ${MAX_HEADER_LINES} and move the narrative to docs/architecture.md`,
        },
      ]
    : [];
}

export function checkFileLength(file: string, text: string): HabitViolation[] {
  if (!LENGTH_ROOTS.some((root) => file.startsWith(root)) || !LENGTH_FILE.test(file) || TEST_FILE.test(file))
    return [];
  const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
  return lines > MAX_PRODUCT_FILE_LINES
    ? [
        {
          file,
          line: MAX_PRODUCT_FILE_LINES + 1,
          rule: 'long-file',
          detail: `has ${lines} lines, over ${MAX_PRODUCT_FILE_LINES}: split it by concern`,
        },
      ]
    : [];
}

export function checkOutsideNotes(file: string, text: string): HabitViolation[] {
  const found: HabitViolation[] = [];
  text.split('\n').forEach((line, index) => {
    for (const pattern of OUTSIDE_NOTES) {
      const match = pattern.exec(line);
      if (match) {
        found.push({
          file,
          line: index + 1,
          rule: 'outside-note',
          detail: `cites "${match[0]}", a note outside the repo: say the point itself`,
        });
      }
    }
  });
  return found;
}

/** The repo paths a markdown text names in backticks: a file name with its ending, or a folder with its slash. */
export function namedPaths(markdown: string): { path: string; line: number }[] {
  const found: { path: string; line: number }[] = [];
  markdown.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(/`([^`\s]+)`/g)) {
      const token = (match[1] ?? '').replace(/#.*$/, '').replace(/:\d+$/, '');
      if (!/^[\w.@-]+(\/[\w.@-]+)*\/?$/.test(token)) continue;
      if (!(PATH_ENDINGS.test(token) || (token.endsWith('/') && token.length > 1))) continue;
      if (!token.includes('/') && !SOURCE_NAME.test(token)) continue;
      found.push({ path: token, line: index + 1 });
    }
  });
  return found;
}

/**
 * A doc's path exists when it names a file or folder from the repo's root, from shared/ (docs name area files
 * as `chat/prompt.ts`), beside the doc, or as the tail of a longer path (an area's `adapters/x.ts`).
 */
export function checkDocPaths(doc: string, markdown: string, files: ReadonlySet<string>): HabitViolation[] {
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) folders.add(`${parts.slice(0, i).join('/')}/`);
  }
  const exists = (candidate: string) =>
    candidate.endsWith('/') ? folders.has(candidate) : files.has(candidate);
  const tailOf = (name: string) => {
    for (const file of name.endsWith('/') ? folders : files) {
      if (file === name || file.endsWith(`/${name}`)) return true;
    }
    return false;
  };
  return namedPaths(markdown)
    .filter(({ path: named }) => !BUILT_ROOTS.some((root) => named.startsWith(root)))
    .filter(({ path: named }) => {
      const beside = path.posix.join(path.posix.dirname(doc), named) + (named.endsWith('/') ? '/' : '');
      return !(exists(named) || exists(`shared/${named}`) || exists(beside) || tailOf(named));
    })
    .map(({ path: named, line }) => ({
      file: doc,
      line,
      rule: 'missing-path' as const,
      detail: `names \`${named}\`, which is not in the repository`,
    }));
}

/**
 * The repository's files: tracked ones and new ones not ignored, so a file is checked before its commit. Outside a
 * git checkout (an unpacked archive), every file but what a build, a run or npm makes.
 */
export function repoFiles(root: string): string[] {
  let listed: string[];
  try {
    const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    listed = out.split('\0');
  } catch {
    listed = walk(root, '');
  }
  return [...new Set(listed.filter((file) => file !== '' && existsSync(path.join(root, file))))];
}

/** Every file under `dir` but git's own and what a build, a run or npm makes, whose folders are never entered. */
function walk(root: string, dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      return file === '.git' || BUILT_ROOTS.includes(`${file}/`) ? [] : walk(root, file);
    }
    return entry.isFile() ? [file] : [];
  });
}

export function checkHabits(root: string): HabitViolation[] {
  const files = repoFiles(root);
  const fileSet = new Set(files);
  const violations: HabitViolation[] = [];
  for (const file of files) {
    const bytes = readFileSync(path.join(root, file));
    if (bytes.includes(0)) continue;
    const text = bytes.toString('utf8');
    violations.push(
      ...checkHeader(file, text),
      ...checkFileLength(file, text),
      ...checkOutsideNotes(file, text),
    );
    if (DOC_FILE.test(file)) violations.push(...checkDocPaths(file, text, fileSet));
  }
  return violations;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const violations = checkHabits(path.resolve(fileURLToPath(import.meta.url), '../..'));
  for (const v of violations) console.error(describeHabitViolation(v));
  if (violations.length > 0) process.exitCode = 1;
  else
    console.log('habits: headers and modules short, no note outside the repo cited, every doc path exists');
}
