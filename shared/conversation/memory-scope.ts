// Where a memory lives: the user's shared memory (`user`), an assistant's own (`assistant:<id>`) or a project's
// (`project:<id>`), all in the user's partition. What a conversation reads and where it writes follow its shape.
import { z } from 'zod';
import { isId } from '../ids.js';
import type { AssistantRef } from './conversation-shape.js';

export const USER_SCOPE = 'user';
export type MemoryScope = typeof USER_SCOPE | `assistant:${string}` | `project:${string}`;

/** A scope as written: `user`, `assistant:` and an assistantId, or `project:` and a projectId. */
export function isMemoryScope(value: string): value is MemoryScope {
  if (value === USER_SCOPE) return true;
  const [kind, id, ...rest] = value.split(':');
  if (rest.length > 0 || id === undefined) return false;
  return (kind === 'assistant' && isId('assistantId', id)) || (kind === 'project' && isId('projectId', id));
}

export const memoryScopeSchema = z
  .string({ error: 'must be a string' })
  .max(64, 'must be at most 64 characters')
  .refine(isMemoryScope, 'must be "user", "assistant:<assistantId>" or "project:<projectId>"');

/** The scope an item carries: absent (written before memory had scopes) is the user's shared memory. */
export function scopeOf(item: { scope?: string | undefined }): MemoryScope {
  return item.scope !== undefined && isMemoryScope(item.scope) ? item.scope : USER_SCOPE;
}

/** The field an item keeps: nothing for the user's shared memory, so such items keep the shape they always had. */
export function scopeField(scope: MemoryScope): { scope?: MemoryScope } {
  return scope === USER_SCOPE ? {} : { scope };
}

/** The scope's parts: what it names, for the checks that it is the caller's. */
export function scopeTarget(
  scope: MemoryScope,
): { kind: 'user' } | { kind: 'assistant'; assistantId: string } | { kind: 'project'; projectId: string } {
  if (scope === USER_SCOPE) return { kind: 'user' };
  const [kind, id = ''] = scope.split(':');
  return kind === 'assistant' ? { kind: 'assistant', assistantId: id } : { kind: 'project', projectId: id };
}

/** What shapes a conversation's memory: its assistant (and whether it keeps its own memory) and its project. */
export interface ScopedShape {
  assistant?: AssistantRef | undefined;
  projectId?: string | undefined;
}

/**
 * The scopes a conversation's turns read: the user's shared memory, its assistant's own memory when the assistant
 * keeps one, and its project's.
 */
export function readScopes(shape: ScopedShape): MemoryScope[] {
  const scopes: MemoryScope[] = [USER_SCOPE];
  if (shape.assistant?.ownMemory === true) scopes.push(`assistant:${shape.assistant.assistantId}`);
  if (shape.projectId !== undefined) scopes.push(`project:${shape.projectId}`);
  return scopes;
}

/**
 * The one scope a conversation's turns write to: its project's when it is filed in one (the user chose that context
 * for it), else its assistant's when the assistant keeps its own memory, else the user's shared memory.
 */
export function writeScope(shape: ScopedShape): MemoryScope {
  if (shape.projectId !== undefined) return `project:${shape.projectId}`;
  if (shape.assistant?.ownMemory === true) return `assistant:${shape.assistant.assistantId}`;
  return USER_SCOPE;
}

/** Whether an item is in one of the scopes. */
export function inScopes(item: { scope?: string | undefined }, scopes: readonly MemoryScope[]): boolean {
  return scopes.includes(scopeOf(item));
}
