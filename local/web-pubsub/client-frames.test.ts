import { describe, expect, it } from 'vitest';
import type { ClientTransport } from './client-connection.js';
import { handleClientFrame } from './client-frames.js';
import { HubService } from './hub-service.js';

class RecordingTransport implements ClientTransport {
  readonly frames: Record<string, unknown>[] = [];
  closed: number | undefined;
  send(frame: string): void {
    this.frames.push(JSON.parse(frame) as Record<string, unknown>);
  }
  close(code: number): void {
    this.closed = code;
  }
  terminate(): void {}
}

function setup(roles: string[] = []) {
  const service = new HubService({ reconnectGraceMs: 1000 });
  const transport = new RecordingTransport();
  const connection = service.open({ hub: 'chat', kind: 'json', userId: 'u1', roles }, transport);
  const send = (frame: object) => handleClientFrame(service, connection, JSON.stringify(frame));
  return { service, transport, connection, send };
}

describe('handleClientFrame', () => {
  it('joins and leaves the group its role names, acknowledging each, and refuses any other group', () => {
    const { service, transport, send } = setup(['webpubsub.joinLeaveGroup.g']);
    send({ type: 'joinGroup', group: 'g', ackId: 1 });
    expect(service.groupExists('chat', 'g')).toBe(true);
    send({ type: 'joinGroup', group: 'h', ackId: 2 });
    expect(service.groupExists('chat', 'h')).toBe(false);
    send({ type: 'leaveGroup', group: 'g', ackId: 3 });
    expect(service.groupExists('chat', 'g')).toBe(false);
    send({ type: 'joinGroup', group: 'g' });
    expect(service.groupExists('chat', 'g')).toBe(true);
    expect(transport.frames.slice(1)).toEqual([
      { type: 'ack', ackId: 1, success: true },
      {
        type: 'ack',
        ackId: 2,
        success: false,
        error: { name: 'Forbidden', message: expect.stringContaining("'h'") as string },
      },
      { type: 'ack', ackId: 3, success: true },
    ]);
  });

  it('refuses group requests without a role with Forbidden, and answers nothing when no ackId was asked for', () => {
    const { transport, send } = setup();
    send({ type: 'joinGroup', group: 'g', ackId: 1 });
    send({ type: 'leaveGroup', group: 'g', ackId: 2 });
    send({ type: 'sendToGroup', group: 'g', dataType: 'text', data: 'hi', ackId: 3 });
    send({ type: 'sendToGroup', group: 'g', dataType: 'text', data: 'no ack wanted' });
    const forbidden = (ackId: number) => ({
      type: 'ack',
      ackId,
      success: false,
      error: { name: 'Forbidden', message: expect.any(String) as string },
    });
    expect(transport.frames.slice(1)).toEqual([forbidden(1), forbidden(2), forbidden(3)]);
  });

  it('answers pings, and events with an error since there is no upstream', () => {
    const { transport, send } = setup();
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

  it('declines a client that sends a malformed frame', () => {
    const { service, transport, connection } = setup();
    handleClientFrame(service, connection, 'not json');
    expect(transport.closed).toBe(1008);
    expect(transport.frames.at(-1)).toMatchObject({ type: 'system', event: 'disconnected' });
    expect(service.connectionExists('chat', connection.id)).toBe(false);
  });
});
