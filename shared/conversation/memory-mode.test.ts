import { describe, expect, it } from 'vitest';
import { memoryFields, memoryModeOf, narrowerMemoryMode, requestedMemoryMode } from './memory-mode.js';

describe('memory modes', () => {
  it('carries each mode in the fields turns always had, and reads it back', () => {
    for (const mode of ['off', 'read', 'readwrite'] as const)
      expect(memoryModeOf(memoryFields(mode))).toBe(mode);
    expect(memoryFields('off')).toEqual({ useMemory: false });
    expect(memoryFields('readwrite')).toEqual({});
  });

  it('takes use_memory as off or readwrite, and `memory` over it', () => {
    expect(requestedMemoryMode({ useMemory: false })).toBe('off');
    expect(requestedMemoryMode({ useMemory: true }, 'read')).toBe('readwrite');
    expect(requestedMemoryMode({}, 'read')).toBe('read');
    expect(requestedMemoryMode({ memory: 'read', useMemory: false })).toBe('read');
  });

  it('never lets a turn widen what its conversation allows', () => {
    expect(narrowerMemoryMode('readwrite', 'off')).toBe('off');
    expect(narrowerMemoryMode('read', 'readwrite')).toBe('read');
    expect(narrowerMemoryMode('readwrite', 'read')).toBe('read');
  });
});
