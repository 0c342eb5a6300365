import { describe, expect, it } from 'vitest';
import { ClientConnection, type ClientKind, type ClientTransport } from './client-connection.js';
import type { Delivery } from './client-messages.js';

class RecordingTransport implements ClientTransport {
  readonly frames: (string | Buffer)[] = [];
  closed: { code: number; reason: string } | undefined;
  terminated = false;
  send(frame: string | Buffer): void {
    this.frames.push(frame);
  }
  close(code: number, reason: string): void {
    this.closed = { code, reason };
  }
  terminate(): void {
    this.terminated = true;
  }
  json(): Record<string, unknown>[] {
    return this.frames.map((f) => JSON.parse(f.toString()) as Record<string, unknown>);
  }
}

function connection(kind: ClientKind, maxUnackedMessages = 1000): ClientConnection {
  return new ClientConnection({
    id: 'c1',
    hub: 'chat',
    userId: 'u1',
    kind,
    roles: [],
    reconnectionToken: kind === 'reliable' ? 'secret' : undefined,
    limits: { maxUnackedMessages, maxUnackedBytes: 1024 * 1024, rememberedAckIds: 2 },
  });
}

const text = (data: string): Delivery => ({ from: 'server', payload: { dataType: 'text', data } });

describe('ClientConnection', () => {
  it('numbers reliable messages and replays only the unacknowledged ones, in order, after a resume', () => {
    const c = connection('reliable');
    const first = new RecordingTransport();
    c.attach(first);
    expect(c.deliver(text('a'))).toBe('sent');
    expect(c.deliver(text('b'))).toBe('sent');
    c.acknowledge(1);
    c.detach();
    expect(c.deliver(text('c'))).toBe('buffered');

    const second = new RecordingTransport();
    c.attach(second);
    expect(second.json()).toEqual([
      { type: 'system', event: 'connected', userId: 'u1', connectionId: 'c1', reconnectionToken: 'secret' },
      { sequenceId: 2, type: 'message', from: 'server', dataType: 'text', data: 'b' },
      { sequenceId: 3, type: 'message', from: 'server', dataType: 'text', data: 'c' },
    ]);
    c.acknowledge(3);
    expect(c.pendingCount).toBe(0);
  });

  it('reports overflow once the unacknowledged buffer is full', () => {
    const c = connection('reliable', 2);
    c.attach(new RecordingTransport());
    expect([c.deliver(text('a')), c.deliver(text('b')), c.deliver(text('c'))]).toEqual([
      'sent',
      'sent',
      'overflow',
    ]);
  });

  it('sends plain JSON messages without sequence ids and raw frames to simple clients', () => {
    const json = connection('json');
    const jsonTransport = new RecordingTransport();
    json.attach(jsonTransport);
    json.deliver({
      from: 'group',
      group: 'g',
      fromUserId: 'u2',
      payload: { dataType: 'binary', data: Buffer.from([1]) },
    });
    expect(jsonTransport.json()[1]).toEqual({
      type: 'message',
      from: 'group',
      group: 'g',
      fromUserId: 'u2',
      dataType: 'binary',
      data: 'AQ==',
    });

    const simple = connection('simple');
    const simpleTransport = new RecordingTransport();
    simple.attach(simpleTransport);
    simple.deliver({ from: 'server', payload: { dataType: 'json', data: { a: 1 } } });
    simple.deliver({ from: 'server', payload: { dataType: 'binary', data: Buffer.from([7]) } });
    expect(simpleTransport.frames).toEqual(['{"a":1}', Buffer.from([7])]);
  });

  it('remembers a bounded number of processed ackIds, oldest forgotten first', () => {
    const c = connection('json');
    c.markProcessed(1);
    c.markProcessed(2);
    c.markProcessed(3);
    expect([c.wasProcessed(1), c.wasProcessed(2), c.wasProcessed(3)]).toEqual([false, true, true]);
  });
});
