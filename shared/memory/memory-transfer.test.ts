// Memory import over in-memory ports: fact lines merge without the model, a dry run writes nothing, the same
// import again (or a restatement differing in case and final punctuation) adds nothing, and a bad line names itself.
import { describe, expect, it } from 'vitest';
import { MemoryConversationSummaries, MemoryProfileFacts } from '../../test/support/in-memory-memory.js';
import type { LlmGateway } from '../llm/llm-gateway.js';
import { ValidationError } from '../errors.js';
import { importMemory, parseImportFile } from './memory-transfer.js';

const noModel = new Proxy({} as LlmGateway, {
  get() {
    throw new Error('fact lines must not call the model');
  },
});

const line = (statement: string, extra: object = {}) =>
  JSON.stringify({
    type: 'fact',
    scope: 'user',
    category: 'interests',
    statement,
    status: 'active',
    ...extra,
  });

function services() {
  return {
    facts: new MemoryProfileFacts(),
    summaries: new MemoryConversationSummaries(),
    llm: noModel,
    now: () => new Date('2026-01-02T03:04:05.000Z'),
  };
}

describe('importMemory', () => {
  it('adds the active facts once, however often the file is imported, and writes nothing on a dry run', async () => {
    const ports = services();
    const ndjson = [
      line('The user loves sailing.', { validFrom: '2025-05-01T00:00:00.000Z' }),
      line('The user loved golf.', { status: 'superseded' }),
      JSON.stringify({ type: 'summary', scope: 'user', sessionId: 's', summary: 'x' }),
    ].join('\n');

    const dry = await importMemory(ports, 'user_001', { ndjson }, { dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, unchanged: 0, skipped: 2 });
    expect(dry.changes).toEqual([
      expect.objectContaining({ op: 'add', statement: 'The user loves sailing.' }),
    ]);
    expect(await ports.facts.list('user_001')).toEqual([]);

    const first = await importMemory(ports, 'user_001', { ndjson }, { dryRun: false });
    expect(first.changes.map((change) => change.factId)).toEqual(dry.changes.map((change) => change.factId));
    const stored = await ports.facts.list('user_001');
    expect(stored).toEqual([
      expect.objectContaining({
        statement: 'The user loves sailing.',
        validFrom: '2025-05-01T00:00:00.000Z',
        provenance: [expect.objectContaining({ sessionId: 'import' })],
      }),
    ]);

    const again = await importMemory(ports, 'user_001', { ndjson }, { dryRun: false });
    expect(again).toMatchObject({ changes: [], unchanged: 1 });
    const restated = await importMemory(
      ports,
      'user_001',
      { ndjson: line('the user loves  sailing') },
      { dryRun: false },
    );
    expect(restated).toMatchObject({ changes: [], unchanged: 1 });
    expect(await ports.facts.list('user_001')).toEqual(stored);
  });

  it('names the line that is not a fact or summary line', () => {
    expect(() => parseImportFile(`${line('The user loves sailing.')}\n{"type":"fact"}`)).toThrow(
      ValidationError,
    );
    expect(() => parseImportFile('not json')).toThrow(/Line 1/);
  });
});
