// One client connection as the service keeps it: its identity, roles and groups, plus - for the reliable
// subprotocol - the sequence-numbered messages the client has not acknowledged yet, which survive a dropped socket
// and are replayed, in order and once, when the client resumes the session.
import { connectedFrame, groupMessageFrame, serverMessageFrame } from './client-messages.js';
import type { Payload } from './payload.js';

/** The socket under a connection; a resumed reliable connection gets a new one. */
export interface ClientTransport {
  send(frame: string): void;
  /** Closes with a close frame. */
  close(code: number, reason: string): void;
  /** Drops the socket without a close frame. */
  terminate(): void;
}

/** `json`: json.webpubsub.azure.v1; `reliable`: json.reliable.webpubsub.azure.v1. */
export type ClientKind = 'json' | 'reliable';

export interface ConnectionLimits {
  /** Unacknowledged messages (count, bytes) a reliable connection may hold before it is closed for good. */
  maxUnackedMessages: number;
  maxUnackedBytes: number;
}

const defaultConnectionLimits: ConnectionLimits = {
  // The service's documented capacity for unacknowledged messages.
  maxUnackedMessages: 1000,
  maxUnackedBytes: 16 * 1024 * 1024,
};

interface ConnectionInit {
  id: string;
  hub: string;
  userId: string | undefined;
  kind: ClientKind;
  /** The token's roles (permissions of the connection itself). */
  roles?: readonly string[];
  reconnectionToken?: string;
  limits?: ConnectionLimits;
}

/** The role that lets a connection join and leave any group; `<role>.<group>` allows that one group. */
export const JOIN_LEAVE_GROUP_ROLE = 'webpubsub.joinLeaveGroup';

/** `overflow`: the reliable buffer is full; the caller closes the connection, as the service does. */
export type DeliveryResult = 'sent' | 'buffered' | 'overflow';

interface PendingMessage {
  sequenceId: number;
  frame: string;
}

export class ClientConnection {
  readonly id: string;
  readonly hub: string;
  readonly userId: string | undefined;
  readonly kind: ClientKind;
  readonly roles: readonly string[];
  /** Groups the connection is in (group names are case-sensitive, as in the service). */
  readonly groups = new Set<string>();
  readonly reconnectionToken: string | undefined;
  private readonly limits: ConnectionLimits;
  private transport: ClientTransport | undefined;
  private lastSequenceId = 0;
  private readonly unacked: PendingMessage[] = [];
  private unackedBytes = 0;

  constructor(init: ConnectionInit) {
    this.id = init.id;
    this.hub = init.hub;
    this.userId = init.userId;
    this.kind = init.kind;
    this.roles = init.roles ?? [];
    this.reconnectionToken = init.reconnectionToken;
    this.limits = init.limits ?? defaultConnectionLimits;
  }

  get attached(): boolean {
    return this.transport !== undefined;
  }

  get pendingCount(): number {
    return this.unacked.length;
  }

  isCurrent(transport: ClientTransport): boolean {
    return this.transport === transport;
  }

  /**
   * Puts the connection on a socket: announces it (`connected`, again on every resume, as the service does) and
   * replays what the client has not acknowledged. Returns the socket it replaced, for the caller to drop.
   */
  attach(transport: ClientTransport): ClientTransport | undefined {
    const previous = this.transport;
    this.transport = transport;
    transport.send(connectedFrame(this.id, this.userId, this.reconnectionToken));
    for (const pending of this.unacked) transport.send(pending.frame);
    return previous;
  }

  detach(): ClientTransport | undefined {
    const previous = this.transport;
    this.transport = undefined;
    return previous;
  }

  /** Whether the token lets this connection join or leave `group` itself (client joinGroup/leaveGroup). */
  mayJoinOrLeave(group: string): boolean {
    return this.roles.some(
      (role) => role === JOIN_LEAVE_GROUP_ROLE || role === `${JOIN_LEAVE_GROUP_ROLE}.${group}`,
    );
  }

  /**
   * A message sent to the connection's user or to one of its groups (`group` set); a plain JSON connection gets
   * it now or never, a reliable one until it acknowledges it.
   */
  deliver(payload: Payload, group?: string): DeliveryResult {
    const frameOf = (sequenceId?: number) =>
      group === undefined
        ? serverMessageFrame(payload, sequenceId)
        : groupMessageFrame(group, payload, sequenceId);
    if (this.kind === 'json') {
      // Plain JSON connections are forgotten as soon as their socket goes, so there is nothing to buffer.
      this.transport?.send(frameOf());
      return 'sent';
    }
    const sequenceId = ++this.lastSequenceId;
    const frame = frameOf(sequenceId);
    const bytes = Buffer.byteLength(frame);
    if (
      this.unacked.length >= this.limits.maxUnackedMessages ||
      this.unackedBytes + bytes > this.limits.maxUnackedBytes
    ) {
      return 'overflow';
    }
    this.unacked.push({ sequenceId, frame });
    this.unackedBytes += bytes;
    if (!this.transport) return 'buffered';
    this.transport.send(frame);
    return 'sent';
  }

  /** Control frames (acks, pongs, system messages) are not sequenced: a detached connection just misses them. */
  sendControl(frame: string): void {
    this.transport?.send(frame);
  }

  /** The client has everything up to `sequenceId` (a cumulative ack). */
  acknowledge(sequenceId: number): void {
    while (this.unacked.length > 0 && this.unacked[0]!.sequenceId <= sequenceId) {
      const done = this.unacked.shift()!;
      this.unackedBytes -= Buffer.byteLength(done.frame);
    }
  }
}
