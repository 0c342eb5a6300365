// newGuid must give the same ids locally as durable-functions does in Azure.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { deterministicGuid, newGuidName } from './deterministic-guid.js';

// durable-functions' own implementation (not part of its public API), to prove the ids match Azure's.
const { GuidManager } = createRequire(import.meta.url)('durable-functions/lib/src/util/GuidManager.js') as {
  GuidManager: {
    UrlNamespaceValue: string;
    createDeterministicGuid(namespace: string, name: string): string;
  };
};

describe('deterministicGuid', () => {
  it('computes the same GUIDs as durable-functions', () => {
    const at = new Date('2026-03-01T10:00:00.000Z');
    for (const name of [newGuidName('turn-1', at, 0), newGuidName('turn-1', at, 1), 'ünïcödé ✓']) {
      expect(deterministicGuid(name)).toBe(
        GuidManager.createDeterministicGuid(GuidManager.UrlNamespaceValue, name),
      );
    }
  });

  it('is a version-5 UUID that changes with the name', () => {
    const guid = deterministicGuid('a');
    expect(guid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deterministicGuid('a')).toBe(guid);
    expect(deterministicGuid('b')).not.toBe(guid);
  });
});
