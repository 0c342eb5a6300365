// The MCP servers endpoints as the settings view calls them, and the header rows of the add form turned into the
// body's `headers` (a name given twice, or a value without a name, is refused before anything is sent).
import type { McpServerTools, McpServerView } from '../../../shared/mcp/contracts.js';
import type { McpToolGrant } from '../../../shared/mcp/tool-grants.js';
import type { ApiClient } from '../api/client';

export type { McpServerTools, McpServerView, McpToolGrant };

export interface HeaderRow {
  name: string;
  value: string;
}

export interface NewMcpServer {
  name: string;
  url: string;
  headers: HeaderRow[];
}

/** The rows with a name or a value, as a header record; a message instead when one cannot be sent. */
export function headersOf(
  rows: readonly HeaderRow[],
): { headers: Record<string, string> } | { problem: string } {
  const headers: Record<string, string> = {};
  for (const row of rows) {
    const name = row.name.trim();
    if (name === '' && row.value === '') continue;
    if (name === '') return { problem: 'A header value needs a header name.' };
    if (row.value === '') return { problem: `The header ${name} needs a value.` };
    if (Object.keys(headers).some((known) => known.toLowerCase() === name.toLowerCase()))
      return { problem: `The header ${name} is given twice.` };
    headers[name] = row.value;
  }
  return { headers };
}

const serverPath = (id: string) => `/api/mcp-servers/${encodeURIComponent(id)}`;

export const mcpServersApi = {
  list: (api: ApiClient) =>
    api.json<{ servers: McpServerView[] }>('GET', '/api/mcp-servers').then((answer) => answer.servers),
  add: (api: ApiClient, server: { name: string; url: string; headers?: Record<string, string> }) =>
    api.json<McpServerView>('POST', '/api/mcp-servers', server),
  setEnabled: (api: ApiClient, id: string, enabled: boolean) =>
    api.json<McpServerView>('PATCH', serverPath(id), { enabled }),
  remove: (api: ApiClient, id: string) => api.json<undefined>('DELETE', serverPath(id)),
  tools: (api: ApiClient, id: string) => api.json<McpServerTools>('GET', `${serverPath(id)}/tools`),
  startOAuth: (api: ApiClient, id: string) =>
    api.json<{ authorizationUrl: string }>('POST', `${serverPath(id)}/oauth/start`),
  disconnect: (api: ApiClient, id: string) => api.json<undefined>('DELETE', `${serverPath(id)}/oauth`),
  approvals: (api: ApiClient, id: string) =>
    api
      .json<{ approvals: McpToolGrant[] }>('GET', `${serverPath(id)}/approvals`)
      .then((answer) => answer.approvals),
  /** Forgets the "always allow" of one tool (its name on the server), or of all of them. */
  revokeApprovals: (api: ApiClient, id: string, tool?: string) =>
    api.json<undefined>(
      'DELETE',
      `${serverPath(id)}/approvals${tool === undefined ? '' : `?tool=${encodeURIComponent(tool)}`}`,
    ),
};

/** Sends the browser to the server's consent; the callback brings it back to `/?mcpOAuth=...&mcpServer=...`. */
export async function connectMcpServer(api: ApiClient, id: string): Promise<void> {
  const { authorizationUrl } = await mcpServersApi.startOAuth(api, id);
  window.location.assign(authorizationUrl);
}

/** What the callback's return to the page says, read from (and then taken off) the address bar. */
export interface OAuthReturn {
  serverId: string;
  connected: boolean;
  reason?: string;
}

export function oauthReturnOf(search: string): OAuthReturn | undefined {
  const query = new URLSearchParams(search);
  const outcome = query.get('mcpOAuth');
  const serverId = query.get('mcpServer');
  if (outcome === null || serverId === null) return undefined;
  const reason = query.get('reason');
  return { serverId, connected: outcome === 'connected', ...(reason === null ? {} : { reason }) };
}

/** The reasons the callback gives, in the user's words. */
export const OAUTH_FAILURES: Record<string, string> = {
  invalid_state: 'the answer did not match a connection you started (or was used already)',
  expired: 'the connection took longer than 10 minutes: try again',
  denied: 'the authorization server did not give access',
  failed: 'the authorization server did not give a token',
};
