// What a turn does with long-term memory, defined once for every edge: `off` (neither read nor written),
// `read` (the profile and memory tools, nothing learned), `readwrite` (the default). `use_memory: false` is `off`.
import { z } from 'zod';

export const MEMORY_MODES = ['off', 'read', 'readwrite'] as const;
export type MemoryMode = (typeof MEMORY_MODES)[number];
export const DEFAULT_MEMORY_MODE: MemoryMode = 'readwrite';

export const memoryModeSchema = z.enum(MEMORY_MODES, { error: 'must be "off", "read" or "readwrite"' });

/**
 * The fields a turn's messages and activities carry for a mode: `useMemory: false` for `off` (the shape turns
 * always had), `memoryMode: 'read'` for `read`, nothing for the default.
 */
export interface MemoryFields {
  useMemory?: false;
  memoryMode?: 'read';
}

/** The schema shape of those fields, for the contracts that carry them. */
export const memoryFieldsShape = {
  useMemory: z.boolean().optional(),
  memoryMode: z.literal('read').optional(),
};

export function memoryFields(mode: MemoryMode): MemoryFields {
  if (mode === 'off') return { useMemory: false };
  if (mode === 'read') return { memoryMode: 'read' };
  return {};
}

/** The mode the fields say (absent fields: the default). */
export function memoryModeOf(fields: {
  useMemory?: boolean | undefined;
  memoryMode?: string | undefined;
}): MemoryMode {
  if (fields.useMemory === false) return 'off';
  return fields.memoryMode === 'read' ? 'read' : DEFAULT_MEMORY_MODE;
}

/**
 * The mode a request asks for: `memory` when given, else the legacy flag (`use_memory: false` is `off`, true is
 * `readwrite`), else the conversation's. A request giving both in disagreement is the caller's to fix.
 */
export function requestedMemoryMode(
  request: { memory?: MemoryMode | undefined; useMemory?: boolean | undefined },
  conversation: MemoryMode = DEFAULT_MEMORY_MODE,
): MemoryMode {
  if (request.memory !== undefined) return request.memory;
  if (request.useMemory === false) return 'off';
  if (request.useMemory === true) return 'readwrite';
  return conversation;
}

/** The stricter of two modes: a conversation whose memory is off stays off whatever a turn asks. */
export function narrowerMemoryMode(a: MemoryMode, b: MemoryMode): MemoryMode {
  return MEMORY_MODES[Math.min(MEMORY_MODES.indexOf(a), MEMORY_MODES.indexOf(b))] ?? 'off';
}

export const readsMemory = (mode: MemoryMode): boolean => mode !== 'off';
export const writesMemory = (mode: MemoryMode): boolean => mode === 'readwrite';
