// Follows the newest text only while the reader is at the bottom of the log: scrolling up to read stops it, and
// coming back down (or "Jump to latest", or sending) starts it again.
import { useEffect, useRef, useState } from 'react';
import type { RefObject } from 'react';

/** Closer to the bottom than this (pixels), the reader counts as at the bottom. */
const NEAR_BOTTOM_PX = 32;

/** `logRef` goes on the scrolling log, `contentRef` on the element inside it that grows. */
export function useStickToBottom(): {
  logRef: RefObject<HTMLDivElement | null>;
  contentRef: RefObject<HTMLDivElement | null>;
  atBottom: boolean;
  jumpToLatest: (smooth?: boolean) => void;
} {
  const log = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const [atBottom, setAtBottom] = useState(true);

  const jumpToLatest = (smooth = false): void => {
    const element = log.current;
    stick.current = true;
    setAtBottom(true);
    element?.scrollTo({ top: element.scrollHeight, behavior: smooth ? 'smooth' : 'auto' });
  };

  useEffect(() => {
    const element = log.current;
    const inner = content.current;
    if (element === null || inner === null) return;
    let lastTop = element.scrollTop;
    const onScroll = (): void => {
      const distance = element.scrollHeight - element.scrollTop - element.clientHeight;
      // Moving up means reading: stop following at once, even within the margin.
      if (element.scrollTop < lastTop - 1) stick.current = false;
      if (distance <= NEAR_BOTTOM_PX) stick.current = true;
      lastTop = element.scrollTop;
      setAtBottom(stick.current);
    };
    // New text (or a code block that highlights, an image that loads) grows the content: follow it if sticking.
    const observer = new ResizeObserver(() => {
      if (!stick.current) return;
      element.scrollTop = element.scrollHeight;
      lastTop = element.scrollTop;
    });
    // A wheel turned up says "reading" before its scroll lands, so new text arriving meanwhile does not undo it.
    const onWheel = (event: WheelEvent): void => {
      if (event.deltaY < 0) stick.current = false;
    };
    element.addEventListener('scroll', onScroll, { passive: true });
    element.addEventListener('wheel', onWheel, { passive: true });
    observer.observe(inner);
    element.scrollTop = element.scrollHeight;
    return () => {
      element.removeEventListener('scroll', onScroll);
      element.removeEventListener('wheel', onWheel);
      observer.disconnect();
    };
  }, []);

  return { logRef: log, contentRef: content, atBottom, jumpToLatest };
}
