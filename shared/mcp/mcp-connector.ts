// The port to MCP servers: list a server's tools, call one. Each use opens a fresh stateless client and closes it;
// every failure comes back as McpCallError with a message the model or the user can read (never a header value).
import { AppError } from '../errors.js';
import type { McpTool, McpTransport } from './contracts.js';

export interface McpTarget {
  url: string;
  transport: McpTransport;
  /** Opened header values: sent to the server, never logged. */
  headers: Record<string, string>;
}

export interface McpCallOutcome {
  /** The result's text (its text parts, other parts described), cut to the limit. */
  text: string;
  /** The server said the call failed (`isError`). */
  isError: boolean;
  /** The text was cut. */
  truncated: boolean;
}

export interface McpConnector {
  listTools(target: McpTarget, options: { timeoutMs: number }): Promise<{ tools: McpTool[]; listed: number }>;
  callTool(
    target: McpTarget,
    name: string,
    args: Record<string, unknown>,
    options: { timeoutMs: number; maxChars: number; signal?: AbortSignal },
  ): Promise<McpCallOutcome>;
}

/** An MCP server could not be reached or did not answer usefully: the message says why, readably. */
export class McpCallError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('mcp_server_failed', message, 502, options);
  }
}
