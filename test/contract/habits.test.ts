// The repository keeps its habits (short file headers, product modules of at most 400 lines, no citation of notes
// outside it, no stale path in its docs), and each check fires on a small bad input.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  checkDocPaths,
  checkFileLength,
  checkHabits,
  checkHeader,
  checkOutsideNotes,
  describeHabitViolation,
  headerLineCount,
  namedPaths,
} from '../../scripts/check-habits.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

describe('the habits of this repository', () => {
  it('holds for every file: short headers and modules, no note outside the repo cited, every doc path present', () => {
    expect(checkHabits(repoRoot).map(describeHabitViolation)).toEqual([]);
  });
});

describe('the header check', () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `// line ${i + 1}`).join('\n');

  it('names a source file that opens with four comment lines', () => {
    const found = checkHeader('shared/chat/long.ts', `${lines(4)}\nimport x from './x.js';\n`);
    expect(found.map(describeHabitViolation)).toEqual([
      expect.stringMatching(/^shared\/chat\/long\.ts:1 long-header: opens with 4 comment lines/),
    ]);
  });

  it('counts the lines of a block comment and stops at the first line of code or blank line', () => {
    expect(headerLineCount('/**\n * role\n * more\n */\nexport {};\n')).toBe(4);
    expect(
      headerLineCount('#!/usr/bin/env node\n// one\n// two\n\n/** the first export */\nexport {};\n'),
    ).toBe(2);
  });

  it('lets three lines pass, and leaves files outside the source roots alone', () => {
    expect(checkHeader('local/short.ts', `${lines(3)}\nexport {};\n`)).toEqual([]);
    expect(checkHeader('infra/main.bicep', `${lines(9)}\n`)).toEqual([]);
    expect(checkHeader('docs/notes.md', `${lines(9)}\n`)).toEqual([]);
  });
});

describe('the length check', () => {
  const text = (n: number) => 'export const x = 1;\n'.repeat(n);

  it('names a module over 400 lines in every folder that holds code', () => {
    const files = [
      'shared/app/app.ts',
      'functions/chat.ts',
      'local/runtime.ts',
      'bench/chat-pipeline.ts',
      'scripts/start.js',
      'web/src/App.tsx',
    ];
    expect(files.flatMap((file) => checkFileLength(file, text(401))).map(describeHabitViolation)).toEqual(
      files.map((file) => `${file}:401 long-file: has 401 lines, over 400: split it by concern`),
    );
  });

  it('lets 400 lines pass, and tests and files outside the code folders grow as they need', () => {
    expect(checkFileLength('shared/app/app.ts', text(400))).toEqual([]);
    expect(checkFileLength('shared/chat/turn/llm-step.test.ts', text(900))).toEqual([]);
    expect(checkFileLength('web/src/chat/messages.test.ts', text(900))).toEqual([]);
    expect(checkFileLength('test/support/local-runtime.ts', text(900))).toEqual([]);
    expect(checkFileLength('infra/main.bicep', text(900))).toEqual([]);
  });
});

describe('the check for notes outside the repository', () => {
  // Built from parts, so this file does not cite what it tests for.
  const citations = [['seed', '000'].join(' '), ['DESIGN', '§6'].join(' '), ['STYLE', '13'].join(' ')];

  it.each(citations)('names the file and line that cite "%s"', (citation) => {
    const found = checkOutsideNotes('shared/a.ts', `// fine\n// as said in ${citation}, keys are scoped\n`);
    expect(found.map(describeHabitViolation)).toEqual([
      expect.stringMatching(new RegExp(`^shared/a\\.ts:2 outside-note: cites "${citation.split(' ')[0]}`)),
    ]);
  });

  it('lets an RFC section and ordinary words pass', () => {
    expect(checkOutsideNotes('README.md', 'RFC 6750 §3; a design review; style 2 of the theme\n')).toEqual(
      [],
    );
  });
});

describe('the check of paths named in docs', () => {
  const files = new Set([
    'shared/chat/turn/llm-step.ts',
    'shared/chat/prompt.ts',
    'README.md',
    'docs/api.md',
  ]);

  it('names a path that is not in the repository', () => {
    const found = checkDocPaths(
      'docs/architecture.md',
      'one\nsee `chat/turn-steps.ts` and `chat/prompt.ts`\n',
      files,
    );
    expect(found.map(describeHabitViolation)).toEqual([
      'docs/architecture.md:2 missing-path: names `chat/turn-steps.ts`, which is not in the repository',
    ]);
  });

  it('finds paths from the root, from shared/, beside the doc, as a tail, and folders by their slash', () => {
    const markdown =
      '`shared/chat/turn/llm-step.ts`, `chat/turn/llm-step.ts`, `api.md`, `turn/llm-step.ts`, `llm-step.ts`, `chat/turn/`';
    expect(checkDocPaths('docs/architecture.md', markdown, files)).toEqual([]);
    expect(checkDocPaths('README.md', '`gone.ts` and `chat/gone/`', files)).toHaveLength(2);
  });

  it('reads file names and folders only, not routes, media types, globs or built output', () => {
    const markdown =
      '`/api/chat` `text/event-stream` `application/problem+json` `test/fixtures/*-x-*` `cosmos.json` `a.ts`';
    expect(namedPaths(markdown).map((named) => named.path)).toEqual(['a.ts']);
    expect(checkDocPaths('README.md', '`dist/functions/index.js` `.local-data/`', files)).toEqual([]);
  });
});
