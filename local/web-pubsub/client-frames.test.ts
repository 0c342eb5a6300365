import { describe, expect, it } from 'vitest';
import type { ClientTransport } from './client-connection.js';
import { handleClientFrame } from './client-frames.js';
import { HubService } from './hub-service.js';

class RecordingTransport implements ClientTransport {
  readonly frames: Record<string, unknown>[] = [];
  closed: number | undefined;
  send(frame: string | Buffer): void {
    this.frames.push(JSON.parse(frame.toString()) as Record<string, unknown>);
  }
  close(code: number): void {
    this.closed = code;
  }
  terminate(): void {}
  acks(): unknown[] {
    return this.frames.filter((f) => f['type'] === 'ack');
  }
}

function setup(roles: string[]) {
  const service = new HubService({ reconnectGraceMs: 1000 });
  const transport = new RecordingTransport();
  const connection = service.open({ hub: 'chat', kind: 'json', userId: 'u1', roles, groups: [] }, transport);
  const send = (frame: object) => handleClientFrame(service, connection, JSON.stringify(frame));
  return { service, transport, connection, send };
}

describe('handleClientFrame', () => {
  it('does not count a forbidden request as processed, so a retry after a grant succeeds', () => {
    const { service, transport, connection, send } = setup([]);
    send({ type: 'joinGroup', group: 'g', ackId: 1 });
    service.grantPermission('chat', connection.id, 'joinLeaveGroup', 'g');
    send({ type: 'joinGroup', group: 'g', ackId: 1 });
    send({ type: 'joinGroup', group: 'g', ackId: 1 });
    expect(transport.acks()).toEqual([
      {
        type: 'ack',
        ackId: 1,
        success: false,
        error: { name: 'Forbidden', message: expect.any(String) as string },
      },
      { type: 'ack', ackId: 1, success: true },
      {
        type: 'ack',
        ackId: 1,
        success: false,
        error: { name: 'Duplicate', message: expect.any(String) as string },
      },
    ]);
    expect(service.groupExists('chat', 'g')).toBe(true);
  });

  it('answers pings, and events with an error since there is no upstream', () => {
    const { transport, send } = setup([]);
    send({ type: 'ping' });
    send({ type: 'event', event: 'typing', dataType: 'text', data: 'x', ackId: 4 });
    send({ type: 'invoke', invocationId: 'i1', target: 'event', event: 'rpc' });
    expect(transport.frames.slice(1)).toEqual([
      { type: 'pong' },
      {
        type: 'ack',
        ackId: 4,
        success: false,
        error: { name: 'InternalServerError', message: expect.any(String) as string },
      },
      {
        type: 'invokeResponse',
        invocationId: 'i1',
        success: false,
        error: { name: 'InternalServerError', message: expect.any(String) as string },
      },
    ]);
  });

  it('declines a client that sends a malformed frame or data of the wrong type', () => {
    for (const frame of [
      'not json',
      JSON.stringify({ type: 'sendToGroup', group: 'g', dataType: 'binary', data: '***' }),
    ]) {
      const { service, transport, connection } = setup(['webpubsub.sendToGroup']);
      handleClientFrame(service, connection, frame);
      expect(transport.closed).toBe(1008);
      expect(transport.frames.at(-1)).toMatchObject({ type: 'system', event: 'disconnected' });
      expect(service.connectionExists('chat', connection.id)).toBe(false);
    }
  });
});
