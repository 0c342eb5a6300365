// How long an answer's reasoning took, measured in the page while it streams: from its first reasoning to the
// first text of the answer (or its end). Kept per answer for as long as the chat is open.
import { useEffect, useRef, useState } from 'react';
import type { ChatUIMessage } from './messages';

export function useThoughtTime(
  messages: readonly ChatUIMessage[],
  busy: boolean,
): ReadonlyMap<string, number> {
  const started = useRef(new Map<string, number>());
  const [seconds, setSeconds] = useState<ReadonlyMap<string, number>>(new Map());
  const last = messages.at(-1);
  const reasoning =
    last?.role === 'assistant' ? last.parts.find((part) => part.type === 'reasoning') : undefined;
  const answering = last?.parts.some((part) => part.type === 'text' && part.text !== '') === true;
  const ended = reasoning?.state === 'done' || answering || !busy;
  const id = last?.id;
  useEffect(() => {
    if (id === undefined || reasoning === undefined || !busy) return;
    if (!started.current.has(id)) started.current.set(id, performance.now());
  }, [id, reasoning, busy]);
  useEffect(() => {
    if (id === undefined || !ended) return;
    const start = started.current.get(id);
    if (start === undefined) return;
    started.current.delete(id);
    setSeconds((previous) => new Map(previous).set(id, (performance.now() - start) / 1000));
  }, [id, ended]);
  return seconds;
}
