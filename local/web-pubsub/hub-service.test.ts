import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ClientTransport } from './client-connection.js';
import { HubService, SESSION_ENDED, type OpenRequest } from './hub-service.js';

class RecordingTransport implements ClientTransport {
  readonly frames: string[] = [];
  closed: number | undefined;
  terminated = false;
  send(frame: string): void {
    this.frames.push(frame);
  }
  close(code: number): void {
    this.closed = code;
  }
  terminate(): void {
    this.terminated = true;
  }
  data(): unknown[] {
    return this.frames
      .map((f) => JSON.parse(f) as { type: string; data?: unknown })
      .flatMap((f) => (f.type === 'message' ? [f.data] : []));
  }
}

const reliable = (userId: string): OpenRequest => ({ hub: 'chat', kind: 'reliable', userId });

const text = (data: string) => ({ dataType: 'text' as const, data });

describe('HubService', () => {
  it('keeps a dropped reliable session, with its messages, until the grace period ends', async () => {
    const service = new HubService({ reconnectGraceMs: 30 });
    const first = new RecordingTransport();
    const c = service.open(reliable('u1'), first);
    expect(service.drop(c.id)).toBe(true);
    expect(first.terminated).toBe(true);
    service.sendToUser('chat', 'u1', text('while away'));

    const second = new RecordingTransport();
    expect(service.resume('CHAT', c.id, c.reconnectionToken!, 'reliable', second).ok).toBe(true);
    expect(second.data()).toEqual(['while away']);

    service.socketClosed(c, second);
    expect(service.connectionExists('chat', c.id)).toBe(true);
    await sleep(80);
    expect(service.connectionExists('chat', c.id)).toBe(false);
  });

  it('refuses to resume with a wrong token, another subprotocol, or an unknown connection', () => {
    const service = new HubService({ reconnectGraceMs: 1000 });
    const c = service.open(reliable('u1'), new RecordingTransport());
    expect(service.resume('chat', c.id, 'wrong', 'reliable', new RecordingTransport())).toMatchObject({
      ok: false,
    });
    expect(
      service.resume('chat', c.id, c.reconnectionToken!, 'json', new RecordingTransport()),
    ).toMatchObject({
      ok: false,
    });
    expect(
      service.resume('other', c.id, c.reconnectionToken!, 'reliable', new RecordingTransport()),
    ).toMatchObject({
      ok: false,
    });
    service.shutdown('done');
  });

  it("joins a connection to its token's groups as it opens, and takes it out of them when it is gone", async () => {
    const service = new HubService({ reconnectGraceMs: 20 });
    const transport = new RecordingTransport();
    const c = service.open({ ...reliable('u1'), groups: ['s1'] }, transport);
    const other = new RecordingTransport();
    service.open({ ...reliable('u1'), groups: ['s2'] }, other);
    service.sendToGroup('chat', 's1', text('to s1'));
    expect(transport.data()).toEqual(['to s1']);
    expect(other.data()).toEqual([]);

    expect(service.drop(c.id)).toBe(true);
    // Still in the group while it may resume ...
    expect(service.groupExists('chat', 's1')).toBe(true);
    await sleep(60);
    // ... and out of it once its session has expired.
    expect(service.groupExists('chat', 's1')).toBe(false);
    expect(service.addToGroup('chat', 's1', c.id)).toBe(false);
  });

  it('forgets a non-reliable connection as soon as its socket closes', () => {
    const service = new HubService({ reconnectGraceMs: 1000 });
    const transport = new RecordingTransport();
    const c = service.open({ ...reliable('u1'), kind: 'json' }, transport);
    service.socketClosed(c, transport);
    expect(service.connectionExists('chat', c.id)).toBe(false);
  });

  it('closes a connection whose unacknowledged messages overflow, telling it why', () => {
    const service = new HubService({
      reconnectGraceMs: 1000,
      limits: { maxUnackedMessages: 1, maxUnackedBytes: 1 << 20 },
    });
    const transport = new RecordingTransport();
    const c = service.open(reliable('u1'), transport);
    service.sendToUser('chat', 'u1', text('a'));
    service.sendToUser('chat', 'u1', text('b'));
    expect(transport.closed).toBe(SESSION_ENDED);
    expect(JSON.parse(transport.frames.at(-1)!)).toMatchObject({ type: 'system', event: 'disconnected' });
    expect(service.connectionExists('chat', c.id)).toBe(false);
  });

  it('counts each message delivered to each connection, in 2 KB units, as Azure bills it', () => {
    const service = new HubService({ reconnectGraceMs: 30 });
    service.open(reliable('u1'), new RecordingTransport());
    service.open(reliable('u1'), new RecordingTransport());
    const listener = service.open(reliable('u2'), new RecordingTransport());
    service.addToGroup('chat', 'room', listener.id);
    service.sendToUser('chat', 'u1', text('small'));
    service.sendToGroup('chat', 'room', text('x'.repeat(5000)));
    service.sendToUser('chat', 'nobody', text('lost'));
    expect(service.stats()).toMatchObject({ deliveredMessages: 3, deliveredMessageUnits: 1 + 1 + 3 });
    service.resetDelivered();
    expect(service.stats()).toMatchObject({ connections: 3, deliveredMessages: 0, deliveredMessageUnits: 0 });
  });
});
