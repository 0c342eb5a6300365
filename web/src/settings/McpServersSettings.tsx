// The MCP servers settings: the operator's servers (read-only) and the user's own, each with "Test" (its tools) and
// its "always allowed" tools; for the user's own, enable/disable and remove; a form adds one. Each refusal shows
// the service's words.
import { useCallback, useEffect, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { describeError } from '../api/client';
import type { ApiClient } from '../api/client';
import { AskFirstButton, ConfirmDialog } from '../panels/ConfirmDialog';
import type { ConfirmRequest } from '../panels/ConfirmDialog';
import { AddMcpServerForm } from './AddMcpServerForm';
import { connectMcpServer, headersOf, mcpServersApi, OAUTH_FAILURES } from './mcp-servers-api';
import type { McpServerTools, McpServerView, NewMcpServer, OAuthReturn } from './mcp-servers-api';
import { McpToolApprovals } from './McpToolApprovals';
import { McpToolList } from './McpToolList';
import { PanelNotices } from '../panels/PanelNotices';

/** What a server's approval policy asks, in the user's words. */
const APPROVAL_LABELS: Record<McpServerView['approval'], string> = {
  always: 'asked before every call',
  never: 'never asked',
  'unless-read-only': 'asked unless the tool is read-only',
};

type Tested =
  { state: 'loading' } | { state: 'loaded'; tools: McpServerTools } | { state: 'failed'; detail: string };

export function McpServersSettings(props: {
  api: ApiClient;
  oauthReturn?: OAuthReturn | undefined;
}): ReactNode {
  const { api, oauthReturn } = props;
  const [servers, setServers] = useState<McpServerView[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(() =>
    oauthReturn === undefined || oauthReturn.connected
      ? undefined
      : `The account was not connected: ${OAUTH_FAILURES[oauthReturn.reason ?? 'failed'] ?? oauthReturn.reason}.`,
  );
  const [status, setStatus] = useState('');
  const [notice] = useState(oauthReturn?.connected === true ? oauthReturn.serverId : undefined);
  const [busy, setBusy] = useState(false);
  const [tested, setTested] = useState<Record<string, Tested>>({});
  const [confirm, setConfirm] = useState<ConfirmRequest | undefined>(undefined);
  const heading = useRef<HTMLHeadingElement>(null);

  const reload = useCallback(
    () =>
      mcpServersApi.list(api).then(
        (list) => setServers(list),
        (failure: unknown) => setError(describeError(failure)),
      ),
    [api],
  );
  useEffect(() => {
    void reload();
  }, [reload]);

  const add = async (server: NewMcpServer): Promise<boolean> => {
    const rows = headersOf(server.headers);
    if ('problem' in rows) {
      setError(rows.problem);
      return false;
    }
    const { headers } = rows;
    setBusy(true);
    setError(undefined);
    try {
      const added = await mcpServersApi.add(api, {
        name: server.name,
        url: server.url,
        ...(Object.keys(headers).length === 0 ? {} : { headers }),
      });
      setServers((previous) => [...(previous ?? []), added]);
      setStatus(`Added ${added.name}.`);
      return true;
    } catch (failure) {
      setError(describeError(failure));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const setEnabled = async (server: McpServerView, enabled: boolean) => {
    setError(undefined);
    // The box follows the click at once; a refusal puts it back.
    const show = (shown: McpServerView) =>
      setServers((previous) => previous?.map((item) => (item.id === shown.id ? shown : item)));
    show({ ...server, enabled });
    try {
      const changed = await mcpServersApi.setEnabled(api, server.id, enabled);
      show(changed);
      setStatus(`${changed.name} ${changed.enabled ? 'enabled' : 'disabled'}.`);
    } catch (failure) {
      show(server);
      setError(describeError(failure));
    }
  };

  const remove = async (server: McpServerView) => {
    setError(undefined);
    try {
      await mcpServersApi.remove(api, server.id);
      setServers((previous) => previous?.filter((item) => item.id !== server.id));
      setStatus(`Removed ${server.name}.`);
      // Its row, and the button that asked, are gone: focus goes to the list's heading.
      heading.current?.focus();
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  const connect = async (server: McpServerView) => {
    setError(undefined);
    try {
      await connectMcpServer(api, server.id);
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  const disconnect = async (server: McpServerView) => {
    setError(undefined);
    try {
      await mcpServersApi.disconnect(api, server.id);
      await reload();
      setStatus(`${server.name} disconnected.`);
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  const test = async (server: McpServerView) => {
    setTested((previous) => ({ ...previous, [server.id]: { state: 'loading' } }));
    try {
      const tools = await mcpServersApi.tools(api, server.id);
      setTested((previous) => ({ ...previous, [server.id]: { state: 'loaded', tools } }));
      setStatus(`${server.name} lists ${tools.tools.length} tools.`);
    } catch (failure) {
      setTested((previous) => ({
        ...previous,
        [server.id]: { state: 'failed', detail: describeError(failure) },
      }));
      // The server asked for an account: its row now offers Connect.
      void reload();
    }
  };

  const operators = servers?.filter((server) => server.owner === 'operator') ?? [];
  const own = servers?.filter((server) => server.owner === 'user') ?? [];

  const row = (server: McpServerView): ReactNode => {
    const result = tested[server.id];
    const mine = server.owner === 'user';
    return (
      <li key={server.id} className="panel-item flex flex-col gap-1.5" aria-label={server.name}>
        <div className="flex flex-wrap items-baseline gap-x-2">
          <span className="font-semibold">{server.name}</span>
          {mine ? null : <span className="muted text-xs">from the operator · read-only</span>}
          {mine && !server.enabled ? <span className="muted text-xs">disabled</span> : null}
        </div>
        <div className="panel-meta">{server.url}</div>
        <div className="panel-meta">Approval: {APPROVAL_LABELS[server.approval]}</div>
        {server.authorization === undefined ? null : (
          <div className="panel-meta">
            {server.authorization === 'connected'
              ? 'Your account is connected.'
              : 'This server needs you to connect your account.'}
            {notice === server.id && server.authorization === 'connected' ? (
              <span role="status"> Connected just now.</span>
            ) : null}
          </div>
        )}
        {server.headerNames.length === 0 ? null : (
          <div className="panel-meta">Headers: {server.headerNames.join(', ')} (values hidden)</div>
        )}
        <McpToolApprovals api={api} server={server} onStatus={setStatus} onError={setError} />
        <div className="flex flex-wrap items-center gap-2">
          <button
            type="button"
            className="btn btn-small"
            aria-label={`Test ${server.name}`}
            disabled={result?.state === 'loading'}
            onClick={() => void test(server)}
          >
            Test
          </button>
          {server.authorization === 'required' ? (
            <button
              type="button"
              className="btn btn-primary btn-small"
              aria-label={`Connect ${server.name}`}
              onClick={() => void connect(server)}
            >
              Connect
            </button>
          ) : server.authorization === 'connected' ? (
            <button
              type="button"
              className="btn btn-quiet btn-small"
              aria-label={`Disconnect ${server.name}`}
              onClick={() => void disconnect(server)}
            >
              Disconnect
            </button>
          ) : null}
          {mine ? (
            <>
              <label className="flex items-center gap-1 text-sm">
                <input
                  type="checkbox"
                  checked={server.enabled}
                  onChange={(event) => void setEnabled(server, event.target.checked)}
                />
                Enabled
                <span className="sr-only"> ({server.name})</span>
              </label>
              <AskFirstButton
                label="Remove"
                ariaLabel={`Remove ${server.name}`}
                ask={setConfirm}
                request={{
                  title: 'Remove this MCP server?',
                  message: `"${server.name}" and its sealed headers will be removed; its tools are not offered from the next turn on.`,
                  onConfirm: () => void remove(server),
                }}
              />
            </>
          ) : null}
        </div>
        {result === undefined ? null : result.state === 'loading' ? (
          <p className="muted m-0 text-sm" role="status">
            Listing the tools of {server.name}…
          </p>
        ) : result.state === 'failed' ? (
          <p role="alert" className="alert text-sm">
            {server.name}: {result.detail}
          </p>
        ) : (
          <McpToolList serverName={server.name} tools={result.tools} />
        )}
      </li>
    );
  };

  return (
    <section className="panel" aria-labelledby="mcp-servers-heading">
      <h2 id="mcp-servers-heading" ref={heading} tabIndex={-1}>
        MCP servers
      </h2>
      <p className="muted m-0 text-sm">
        The model can call the tools of these servers in your conversations. A call of a tool that needs your
        approval waits for your answer in the conversation.
      </p>
      <PanelNotices status={status} error={error} />
      {servers === undefined ? (
        <p className="muted m-0">Loading servers…</p>
      ) : (
        <>
          {operators.length === 0 ? null : (
            <>
              <h3>From the operator</h3>
              <ul className="panel-list" aria-label="The operator's servers">
                {operators.map(row)}
              </ul>
            </>
          )}
          <h3>Yours</h3>
          {own.length === 0 ? (
            <p className="muted m-0">You have added no server yet.</p>
          ) : (
            <ul className="panel-list" aria-label="Your servers">
              {own.map(row)}
            </ul>
          )}
        </>
      )}
      <AddMcpServerForm busy={busy} onAdd={add} />
      <ConfirmDialog request={confirm} onClose={() => setConfirm(undefined)} />
    </section>
  );
}
