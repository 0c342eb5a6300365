// A client socket that delivers each frame one web-pubsub.delivery draw after it was sent, as the service's hop to
// the client takes that long, while keeping the connection's order: no frame (nor the close) overtakes an earlier one.
import type { ClientTransport } from './client-connection.js';

type Pending = { at: number; frame: string } | { at: number; close: { code: number; reason: string } };

/** `delayMs` is drawn once per frame; a frame is delivered no earlier than the one before it. */
export function delayedTransport(inner: ClientTransport, delayMs: () => number): ClientTransport {
  const queue: Pending[] = [];
  let timer: NodeJS.Timeout | undefined;
  let lastAt = 0;
  let terminated = false;

  const flush = (): void => {
    timer = undefined;
    const now = Date.now();
    while (queue.length > 0 && queue[0]!.at <= now) {
      const next = queue.shift()!;
      if ('frame' in next) inner.send(next.frame);
      else inner.close(next.close.code, next.close.reason);
    }
    arm();
  };
  const arm = (): void => {
    const head = queue[0];
    if (head === undefined || timer !== undefined) return;
    timer = setTimeout(flush, Math.max(0, head.at - Date.now()));
  };
  const push = (entry: (at: number) => Pending, ms: number): void => {
    if (terminated) return;
    lastAt = Math.max(Date.now() + ms, lastAt);
    queue.push(entry(lastAt));
    arm();
  };

  return {
    send: (frame) => push((at) => ({ at, frame }), delayMs()),
    // A close frame travels like the others, behind what was sent before it.
    close: (code, reason) => push((at) => ({ at, close: { code, reason } }), 0),
    // A dropped socket loses whatever was still on its way.
    terminate: () => {
      terminated = true;
      queue.length = 0;
      clearTimeout(timer);
      timer = undefined;
      inner.terminate();
    },
  };
}
