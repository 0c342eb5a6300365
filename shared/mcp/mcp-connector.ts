// The port to MCP servers: list a server's tools, call one. Each use opens a fresh stateless client and closes it;
// every failure comes back as McpCallError with a message the model or the user can read (never a header value).
import { AppError } from '../errors.js';
import type { McpTool, McpTransport } from './contracts.js';

export interface McpTarget {
  url: string;
  transport: McpTransport;
  /** Opened header values: sent to the server, never logged. */
  headers: Record<string, string>;
  /** The user's OAuth grant for this server, opened; a refresh is handed to `save` before the use goes on. */
  oauth?: {
    grant: McpOAuthGrant;
    save(grant: McpOAuthGrant): Promise<void>;
    /** The server asked for a token this grant could not give: the user is to connect (again). */
    required(): Promise<void>;
  };
}

/**
 * What a user's OAuth grant holds, opened: the client registration and tokens as the authorization server gave them
 * (secrets: never logged), when the access token expires, and what discovery found (no secret).
 */
export interface McpOAuthGrant {
  client?: Record<string, unknown>;
  tokens?: Record<string, unknown>;
  tokensExpireAt?: string;
  discovery?: Record<string, unknown>;
  /** The redirect URL the client was registered with. */
  redirectUrl?: string;
}

/** Sends a user to an MCP server's authorization server and redeems what comes back (authorization code + PKCE). */
export interface McpAuthorizer {
  /** Discovery, client registration where offered, then the authorization URL (with `state` and `resource`). */
  start(
    target: Pick<McpTarget, 'url' | 'headers'>,
    grant: McpOAuthGrant,
    options: { redirectUrl: string; state: string; timeoutMs: number },
  ): Promise<{ authorizationUrl: string; verifier: string; grant: McpOAuthGrant }>;
  /** The code exchanged with the verifier for tokens. */
  finish(
    target: Pick<McpTarget, 'url' | 'headers'>,
    grant: McpOAuthGrant,
    options: { redirectUrl: string; code: string; iss?: string; verifier: string; timeoutMs: number },
  ): Promise<McpOAuthGrant>;
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

/** The server wants an OAuth token this user does not have (or that can no longer be refreshed): they must connect. */
export class McpAuthorizationRequiredError extends AppError {
  constructor(host: string) {
    super(
      'mcp_authorization_required',
      `the MCP server at ${host} needs the user to connect their account (OAuth) first`,
      409,
    );
  }
}

/** An MCP server could not be reached or did not answer usefully: the message says why, readably. */
export class McpCallError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('mcp_server_failed', message, 502, options);
  }
}
