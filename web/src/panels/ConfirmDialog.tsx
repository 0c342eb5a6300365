// A modal question before something that cannot be undone (delete, forget): focus stays inside it and starts on
// Cancel, Escape closes it, and focus goes back to what opened it.
import { Dialog } from 'radix-ui';
import { useRef } from 'react';
import type { ReactNode } from 'react';

export interface ConfirmRequest {
  title: string;
  message: string;
  confirmLabel: string;
  onConfirm: () => void;
}

export function ConfirmDialog(props: {
  request: ConfirmRequest | undefined;
  onClose: () => void;
}): ReactNode {
  const { request, onClose } = props;
  const cancel = useRef<HTMLButtonElement>(null);
  // The button that asked: the dialog has no trigger of its own to give focus back to.
  const opener = useRef<Element | null>(null);
  return (
    <Dialog.Root
      open={request !== undefined}
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
    >
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-50 bg-black/45" />
        <Dialog.Content
          className="fixed top-1/2 left-1/2 z-50 w-[min(28rem,calc(100vw-2rem))] -translate-x-1/2 -translate-y-1/2 rounded-lg border border-line bg-raised p-5 text-fg shadow-xl"
          onOpenAutoFocus={(event) => {
            // Focus has not moved yet: what has it now is what asked.
            opener.current = document.activeElement;
            event.preventDefault();
            cancel.current?.focus();
          }}
          onCloseAutoFocus={(event) => {
            event.preventDefault();
            const element = opener.current;
            if (element instanceof HTMLElement && element.isConnected) element.focus();
          }}
        >
          {request === undefined ? null : (
            <form
              onSubmit={(event) => {
                event.preventDefault();
                request.onConfirm();
                onClose();
              }}
            >
              <Dialog.Title className="mt-0 mb-2 text-lg font-semibold">{request.title}</Dialog.Title>
              <Dialog.Description className="mb-4">{request.message}</Dialog.Description>
              <div className="flex justify-end gap-2">
                <Dialog.Close asChild>
                  <button type="button" className="btn" ref={cancel}>
                    Cancel
                  </button>
                </Dialog.Close>
                <button type="submit" className="btn btn-danger">
                  {request.confirmLabel}
                </button>
              </div>
            </form>
          )}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

/** A small quiet button that asks before it acts: its label is also the dialog's button that confirms. */
export function AskFirstButton(props: {
  label: string;
  /** What a screen reader announces: the label and what it acts on. */
  ariaLabel: string;
  ask: (request: ConfirmRequest) => void;
  request: Omit<ConfirmRequest, 'confirmLabel'>;
}): ReactNode {
  const { label, ariaLabel, ask, request } = props;
  return (
    <button
      type="button"
      className="btn btn-quiet btn-small"
      aria-label={ariaLabel}
      onClick={() => ask({ ...request, confirmLabel: label })}
    >
      {label}
    </button>
  );
}
