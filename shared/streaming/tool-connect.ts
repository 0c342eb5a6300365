// The Connect need of a tool call whose MCP server the user must connect first, as its stored result carries it.
// Browser-safe (no schema library): the web client reads it back from a stored call.
import type { ToolConnectNeed } from './contracts.js';

/**
 * The result a call that needs its server connected gives: the error the model reads, with the need beside it, so the
 * stored call (which keeps only its result) still says which server to connect when the page reads it back.
 */
export function connectNeededResult(message: string, need: ToolConnectNeed): string {
  return JSON.stringify({ error: message, connect: need });
}

/** The Connect need a stored failed call's result names (connectNeededResult), if any. */
export function connectNeedOf(result: string): ToolConnectNeed | undefined {
  let value: unknown;
  try {
    value = JSON.parse(result);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || !('connect' in value)) return undefined;
  const need: unknown = value.connect;
  if (typeof need !== 'object' || need === null) return undefined;
  const { serverId, serverName } = need as Record<string, unknown>;
  return typeof serverId === 'string' && typeof serverName === 'string'
    ? { serverId, serverName }
    : undefined;
}
