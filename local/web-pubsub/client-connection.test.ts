import { describe, expect, it } from 'vitest';
import { ClientConnection, type ClientKind, type ClientTransport } from './client-connection.js';
import type { Payload } from './payload.js';

class RecordingTransport implements ClientTransport {
  readonly frames: string[] = [];
  closed: { code: number; reason: string } | undefined;
  terminated = false;
  send(frame: string): void {
    this.frames.push(frame);
  }
  close(code: number, reason: string): void {
    this.closed = { code, reason };
  }
  terminate(): void {
    this.terminated = true;
  }
  json(): Record<string, unknown>[] {
    return this.frames.map((f) => JSON.parse(f) as Record<string, unknown>);
  }
}

function connection(kind: ClientKind, maxUnackedMessages = 1000): ClientConnection {
  return new ClientConnection({
    id: 'c1',
    hub: 'chat',
    userId: 'u1',
    kind,
    ...(kind === 'reliable' ? { reconnectionToken: 'secret' } : {}),
    limits: { maxUnackedMessages, maxUnackedBytes: 1024 * 1024 },
  });
}

const text = (data: string): Payload => ({ dataType: 'text', data });

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

  it('sends plain JSON messages without sequence ids, binary data as base64', () => {
    const json = connection('json');
    const jsonTransport = new RecordingTransport();
    json.attach(jsonTransport);
    json.deliver({ dataType: 'binary', data: Buffer.from([1]) });
    expect(jsonTransport.json()[1]).toEqual({
      type: 'message',
      from: 'server',
      dataType: 'binary',
      data: 'AQ==',
    });
    expect(json.pendingCount).toBe(0);
  });
});
