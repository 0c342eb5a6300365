// The tools a server lists, as "Test" loads them: each with whether the model is offered it (and by which name),
// or why not, and whether a call waits for the user's approval first.
import type { ReactNode } from 'react';
import type { McpServerTools } from './mcp-servers-api';

type Tool = McpServerTools['tools'][number];

function statusOf(tool: Tool): { label: string; detail: string | undefined; offered: boolean } {
  if (tool.offered)
    return {
      label: tool.needsApproval ? 'Offered, needs approval' : 'Offered',
      detail: tool.modelName === undefined ? undefined : `as ${tool.modelName}`,
      offered: true,
    };
  return { label: 'Not offered', detail: "left out by the server's tool filter", offered: false };
}

export function McpToolList(props: { serverName: string; tools: McpServerTools }): ReactNode {
  const { tools } = props.tools;
  const held = tools.filter((tool) => tool.needsApproval).length;
  return (
    <div className="flex flex-col gap-1.5 text-sm">
      <p className="m-0">
        {tools.length === 0
          ? 'The server lists no tools.'
          : `${tools.length} ${tools.length === 1 ? 'tool' : 'tools'}, ${tools.filter((tool) => tool.offered).length} offered to the model.`}
        {props.tools.listed > tools.length
          ? ` The server listed ${props.tools.listed}; only these are kept.`
          : ''}
      </p>
      {held === 0 ? null : (
        <p className="m-0 rounded-lg border border-line bg-soft px-2 py-1">
          A call of a tool that needs your approval waits for your Approve or Deny in the conversation.
        </p>
      )}
      {tools.length === 0 ? null : (
        <ul className="m-0 flex list-none flex-col gap-1 p-0" aria-label={`Tools of ${props.serverName}`}>
          {tools.map((tool) => {
            const status = statusOf(tool);
            return (
              <li
                key={tool.name}
                className="rounded-md border border-line px-2 py-1 [overflow-wrap:anywhere]"
              >
                <div className="flex flex-wrap items-baseline gap-x-2">
                  <span className="font-mono font-semibold">{tool.name}</span>
                  <span
                    className={`rounded-full border px-2 text-xs ${status.offered ? 'border-accent text-accent' : 'border-line'}`}
                  >
                    {status.label}
                  </span>
                  {status.detail === undefined ? null : (
                    <span className={`muted text-xs ${status.offered ? 'font-mono' : ''}`}>
                      {status.detail}
                    </span>
                  )}
                  {tool.readOnly ? <span className="muted text-xs">read-only</span> : null}
                </div>
                {tool.description === undefined || tool.description === '' ? null : (
                  <p className="muted m-0 text-xs">{tool.description}</p>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
