// The delayed client socket: every frame arrives late yet in the order sent, the close comes after them, and a
// dropped socket delivers nothing more.
import { describe, expect, it } from 'vitest';
import type { ClientTransport } from './client-connection.js';
import { delayedTransport } from './delayed-transport.js';

function recorder(): ClientTransport & { log: string[]; done: Promise<void> } {
  const log: string[] = [];
  let finish = (): void => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    log,
    done,
    send: (frame) => log.push(frame),
    close: (code, reason) => {
      log.push(`close ${code} ${reason}`);
      finish();
    },
    terminate: () => {
      log.push('terminate');
      finish();
    },
  };
}

describe('delayedTransport', () => {
  it('delivers later frames no earlier than earlier ones, then the close', async () => {
    const inner = recorder();
    // Falling delays: without the ordering, the last frame would arrive first.
    const delays = [40, 30, 20, 10, 0];
    const transport = delayedTransport(inner, () => delays.shift() ?? 0);
    for (const frame of ['a', 'b', 'c', 'd', 'e']) transport.send(frame);
    transport.close(1000, 'bye');
    expect(inner.log).toEqual([]);
    await inner.done;
    expect(inner.log).toEqual(['a', 'b', 'c', 'd', 'e', 'close 1000 bye']);
  });

  it('drops what is still on its way when the socket is terminated', async () => {
    const inner = recorder();
    const transport = delayedTransport(inner, () => 20);
    transport.send('lost');
    transport.terminate();
    transport.send('after');
    await inner.done;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(inner.log).toEqual(['terminate']);
  });
});
