// Where focus starts when the chat mounts: in the composer where a keyboard is likely (on a phone it would pop the
// keyboard over the chat), unless the reader has already put it elsewhere, such as a header button clicked while
// the chat was still loading (taking focus from an open popover would close it).
import { useEffect } from 'react';
import type { RefObject } from 'react';

export function useInitialFocus(target: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const untouched = document.activeElement === null || document.activeElement === document.body;
    if (untouched && window.matchMedia('(pointer: fine)').matches) target.current?.focus();
  }, [target]);
}
