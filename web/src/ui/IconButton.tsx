// A square button with an icon, its name for assistive technology, and the same name as a tooltip on hover.
import { Tooltip } from 'radix-ui';
import type { ComponentProps, ReactNode } from 'react';

export function IconButton(
  props: ComponentProps<'button'> & { label: string; icon: ReactNode; quiet?: boolean },
): ReactNode {
  const { label, icon, quiet = true, className = '', ...rest } = props;
  return (
    <Tooltip.Root>
      <Tooltip.Trigger asChild>
        <button
          type="button"
          aria-label={label}
          className={`btn btn-icon ${quiet ? 'btn-quiet' : ''} ${className}`}
          {...rest}
        >
          {icon}
        </button>
      </Tooltip.Trigger>
      <Tooltip.Portal>
        <Tooltip.Content
          sideOffset={4}
          className="z-50 rounded-md bg-fg px-2 py-1 text-xs text-page shadow"
          aria-hidden
        >
          {label}
        </Tooltip.Content>
      </Tooltip.Portal>
    </Tooltip.Root>
  );
}
