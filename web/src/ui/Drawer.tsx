// A panel that slides over the page from one side on narrow screens (a modal dialog: focus stays inside it,
// Escape or a tap outside closes it, focus goes back to the button that opened it).
import { Dialog } from 'radix-ui';
import { X } from 'lucide-react';
import type { ReactNode } from 'react';

export function Drawer(props: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  side: 'left' | 'right';
  title: string;
  children: ReactNode;
}): ReactNode {
  const edge = props.side === 'left' ? 'left-0 border-r' : 'right-0 border-l';
  return (
    <Dialog.Root open={props.open} onOpenChange={props.onOpenChange}>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-40 bg-black/45" />
        <Dialog.Content
          aria-describedby={undefined}
          className={`fixed top-0 bottom-0 z-40 flex w-[min(22rem,88vw)] flex-col border-line bg-soft shadow-xl ${edge}`}
        >
          <div className="flex items-center justify-end px-2 pt-2">
            {/* The panel inside shows the same words as its heading. */}
            <Dialog.Title className="sr-only">{props.title}</Dialog.Title>
            <Dialog.Close
              className="btn btn-quiet btn-icon"
              aria-label={`Close ${props.title.toLowerCase()}`}
            >
              <X size={18} aria-hidden />
            </Dialog.Close>
          </div>
          <div className="min-h-0 flex-1 overflow-y-auto px-3 pb-3">{props.children}</div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
