// A server's remembered approvals: the tools the user said to "always allow" in a conversation, each revocable
// (its calls then wait for a yes again), loaded from the service when the server's row is shown.
import { useEffect, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { describeError } from '../api/client';
import type { ApiClient } from '../api/client';
import { shortDate } from '../panels/api-types';
import { mcpServersApi } from './mcp-servers-api';
import type { McpServerView, McpToolGrant } from './mcp-servers-api';

export function McpToolApprovals(props: {
  api: ApiClient;
  server: McpServerView;
  onStatus: (status: string) => void;
  onError: (error: string) => void;
}): ReactNode {
  const { api, server, onStatus, onError } = props;
  const [grants, setGrants] = useState<McpToolGrant[] | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const label = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let live = true;
    mcpServersApi.approvals(api, server.id).then(
      (list) => {
        if (live) setGrants(list);
      },
      (failure: unknown) => {
        if (live) onError(describeError(failure));
      },
    );
    return () => {
      live = false;
    };
  }, [api, server.id, onError]);

  const revoke = async (tool?: string) => {
    setBusy(true);
    try {
      await mcpServersApi.revokeApprovals(api, server.id, tool);
      setGrants((previous) => (tool === undefined ? [] : previous?.filter((grant) => grant.tool !== tool)));
      onStatus(
        tool === undefined
          ? `Calls of ${server.name}'s tools wait for your approval again.`
          : `Calls of ${tool} wait for your approval again.`,
      );
      // The button that asked is gone: focus stays in the server's approvals.
      label.current?.focus();
    } catch (failure) {
      onError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  if (grants === undefined) return null;
  return (
    <div className="flex flex-col gap-1 text-sm">
      <div ref={label} tabIndex={-1} className="panel-meta">
        {grants.length === 0
          ? 'Always allowed: no tool.'
          : 'Always allowed (their calls run without asking you):'}
      </div>
      {grants.length === 0 ? null : (
        <ul
          className="m-0 flex list-none flex-col gap-1 p-0"
          aria-label={`Tools of ${server.name} always allowed`}
        >
          {grants.map((grant) => (
            <li
              key={grant.tool}
              aria-label={grant.tool}
              className="flex flex-wrap items-baseline gap-x-2 rounded-md border border-line px-2 py-1 [overflow-wrap:anywhere]"
            >
              <span className="font-mono font-semibold">{grant.tool}</span>
              <span className="muted text-xs">
                since <time dateTime={grant.grantedAt}>{shortDate(grant.grantedAt)}</time>
              </span>
              <button
                type="button"
                className="btn btn-quiet btn-small ml-auto"
                aria-label={`Revoke always allow of ${grant.tool}`}
                disabled={busy}
                onClick={() => void revoke(grant.tool)}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
      {grants.length < 2 ? null : (
        <div>
          <button
            type="button"
            className="btn btn-quiet btn-small"
            aria-label={`Revoke every always allow of ${server.name}`}
            disabled={busy}
            onClick={() => void revoke()}
          >
            Revoke all
          </button>
        </div>
      )}
    </div>
  );
}
