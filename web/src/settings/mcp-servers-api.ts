// The MCP servers endpoints as the settings view calls them, and the header rows of the add form turned into the
// body's `headers` (a name given twice, or a value without a name, is refused before anything is sent).
import type { McpServerTools, McpServerView } from '../../../shared/mcp/contracts.js';
import type { ApiClient } from '../api/client';

export type { McpServerTools, McpServerView };

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
};
