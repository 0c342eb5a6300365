// Whether a call of an MCP tool needs its user's yes first: `always`, `never`, or `unless-read-only` (a tool its
// server marks readOnlyHint runs at once). The turn waits durably for that yes (or its timeout) before such a call.
import type { ApprovalPolicy, McpTool } from './contracts.js';

export function needsApproval(policy: ApprovalPolicy, tool: Pick<McpTool, 'readOnly'>): boolean {
  switch (policy) {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'unless-read-only':
      return !tool.readOnly;
  }
}
