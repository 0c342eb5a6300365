// The card of a tool call that waits for the user's yes: what the tool would be called with, and Approve, Deny or
// Always allow. It shows wherever the message is (live, or replayed when the page is opened later).
import { useState, type ReactNode } from 'react';
import { describeError } from '../api/client';
import type { ApprovalAnswer } from './approvals';

export function ApprovalCard(props: {
  toolName: string;
  input: unknown;
  onAnswer(answer: ApprovalAnswer): Promise<void>;
}): ReactNode {
  const [sent, setSent] = useState<ApprovalAnswer | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const answer = (given: ApprovalAnswer) => {
    setSent(given);
    setError(undefined);
    props.onAnswer(given).catch((failure: unknown) => {
      setSent(undefined);
      setError(describeError(failure));
    });
  };
  return (
    <section
      className="approval-card my-2 rounded-lg border border-accent bg-soft px-3 py-2 text-sm"
      aria-label={`Approval of ${props.toolName}`}
    >
      <p className="m-0 font-semibold">The assistant wants to call {props.toolName}</p>
      <p className="muted my-1">Input</p>
      <pre className="max-h-64 overflow-auto font-mono text-xs whitespace-pre-wrap [overflow-wrap:anywhere]">
        {JSON.stringify(props.input, null, 2)}
      </pre>
      {sent !== undefined ? (
        <p className="m-0" role="status">
          {sent.approved
            ? sent.always === true
              ? 'Always allowed: running it.'
              : 'Approved: running it.'
            : 'Denied.'}
        </p>
      ) : (
        <div className="mt-2 flex flex-wrap gap-2">
          <button type="button" className="btn btn-primary" onClick={() => answer({ approved: true })}>
            Approve
          </button>
          <button type="button" className="btn btn-quiet" onClick={() => answer({ approved: false })}>
            Deny
          </button>
          <button
            type="button"
            className="btn btn-quiet"
            onClick={() => answer({ approved: true, always: true })}
          >
            Always allow this tool
          </button>
        </div>
      )}
      {error === undefined ? null : (
        <p className="alert mt-2 text-sm" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
