// Follows the newest text only while the reader is at the bottom of the log: scrolling up to read stops it, and
// coming back down (or "Jump to latest", or sending) starts it again.
import { useEffect, useRef, useState } from 'react';
import type { RefObject } from 'react';

/** Closer to the bottom than this (pixels), the reader counts as at the bottom. */
const NEAR_BOTTOM_PX = 32;

/** Where the log scrolled to (`distance` is from its bottom), whether it goes on following the newest text. */
export function followsAfterScroll(scroll: {
  sticking: boolean;
  top: number;
  lastTop: number;
  distance: number;
}): boolean {
  const movedUp = scroll.top < scroll.lastTop - 1;
  // Content that shrank (an answer re-laid out) pulls the scroll position up to the new end: the reader did not
  // move, so whether the log follows stays as it was. Coming back down to the end is what starts it again.
  if (movedUp && scroll.distance <= 1) return scroll.sticking;
  // Moving up means reading: stop following at once, even within the margin.
  if (movedUp) return false;
  return scroll.distance <= NEAR_BOTTOM_PX || scroll.sticking;
}

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
      stick.current = followsAfterScroll({
        sticking: stick.current,
        top: element.scrollTop,
        lastTop,
        distance,
      });
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
