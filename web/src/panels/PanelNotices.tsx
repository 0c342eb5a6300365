// What a panel tells of its last action: a status read out by screen readers only, and a refusal shown as an alert.
import type { ReactNode } from 'react';

export function PanelNotices(props: { status: string; error: string | undefined }): ReactNode {
  const { status, error } = props;
  return (
    <>
      <p className="sr-only" role="status">
        {status}
      </p>
      {error === undefined ? null : (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
    </>
  );
}
