// What the service does to connections, whoever asks (REST or a client frame): sends to a user or a group, group
// membership, and a connection's life across sockets - open, drop, resume within the grace period, expiry.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  ClientConnection,
  type ClientKind,
  type ClientTransport,
  type ConnectionLimits,
} from './client-connection.js';
import { disconnectedFrame } from './client-messages.js';
import { HubRegistry } from './hub-registry.js';
import { billedMessageUnits, type Payload } from './payload.js';

interface HubServiceOptions {
  /** How long a dropped reliable connection keeps its session (its unacknowledged messages). */
  reconnectGraceMs: number;
  limits?: ConnectionLimits;
}

export interface OpenRequest {
  hub: string;
  kind: ClientKind;
  userId: string | undefined;
  /** The token's roles. */
  roles?: readonly string[];
  /** Groups the token joins the connection to as it opens (`webpubsub.group`). */
  groups?: readonly string[];
}

type ResumeResult = { ok: true; connection: ClientConnection } | { ok: false; reason: string };

/**
 * Close code that tells a client its session is gone and must not be resumed, as Web PubSub's reliable JSON
 * client protocol closes a session it cannot recover.
 */
export const SESSION_ENDED = 1008;
const GOING_AWAY = 1001;

export class HubService {
  private readonly registry = new HubRegistry();
  private readonly graceTimers = new Map<string, NodeJS.Timeout>();
  /** Messages delivered to connections (what Azure bills: outbound, in 2 KB units) since resetDelivered(). */
  private delivered = { deliveredMessages: 0, deliveredMessageUnits: 0 };

  constructor(private readonly options: HubServiceOptions) {}

  /** Connections with a socket (a dropped reliable one waiting for its client does not count). */
  stats(): { connections: number; deliveredMessages: number; deliveredMessageUnits: number } {
    return { connections: this.registry.all().filter((c) => c.attached).length, ...this.delivered };
  }

  resetDelivered(): void {
    this.delivered = { deliveredMessages: 0, deliveredMessageUnits: 0 };
  }

  // --- connection lifetime ---------------------------------------------------------------------------------

  open(request: OpenRequest, transport: ClientTransport): ClientConnection {
    const connection = new ClientConnection({
      id: randomBytes(16).toString('base64url'),
      hub: request.hub,
      userId: request.userId,
      kind: request.kind,
      ...(request.roles ? { roles: request.roles } : {}),
      ...(request.kind === 'reliable' ? { reconnectionToken: randomBytes(32).toString('base64url') } : {}),
      ...(this.options.limits ? { limits: this.options.limits } : {}),
    });
    this.registry.add(connection);
    // Joined before `connected` goes out, so a group message sent once the client is connected reaches it.
    for (const group of request.groups ?? []) this.registry.join(connection, group);
    connection.attach(transport);
    return connection;
  }

  resume(
    hub: string,
    connectionId: string,
    token: string,
    kind: ClientKind,
    transport: ClientTransport,
  ): ResumeResult {
    const connection = this.registry.find(hub, connectionId);
    if (!connection)
      return { ok: false, reason: 'The connection has expired or does not exist: start a new one.' };
    if (connection.kind !== 'reliable' || kind !== 'reliable') {
      return { ok: false, reason: 'Only json.reliable.webpubsub.azure.v1 connections can be resumed.' };
    }
    if (!sameSecret(token, connection.reconnectionToken ?? '')) {
      return { ok: false, reason: 'The reconnection token is not valid for this connection.' };
    }
    this.clearGrace(connection);
    // The old socket may still look open when the client has already given up on it.
    connection.attach(transport)?.terminate();
    return { ok: true, connection };
  }

  /** The socket went away on its own (client close or network): reliable sessions wait for a resume. */
  socketClosed(connection: ClientConnection, transport: ClientTransport): void {
    if (!connection.isCurrent(transport)) return;
    connection.detach();
    this.afterDetach(connection);
  }

  /** Cuts the socket without a close frame, as a network failure would. */
  drop(connectionId: string): boolean {
    const connection = this.registry.byConnectionId(connectionId);
    if (!connection) return false;
    const transport = connection.detach();
    this.afterDetach(connection);
    transport?.terminate();
    return true;
  }

  /** Ends a connection for good: tells the client why, closes its socket and forgets its session. */
  disconnect(connection: ClientConnection, reason: string, code = SESSION_ENDED): void {
    this.clearGrace(connection);
    this.registry.remove(connection);
    const transport = connection.detach();
    if (!transport) return;
    transport.send(disconnectedFrame(reason));
    transport.close(code, closeReason(reason));
  }

  shutdown(reason: string): void {
    for (const connection of this.registry.all()) this.disconnect(connection, reason, GOING_AWAY);
  }

  // --- sends and queries ----------------------------------------------------------------------------------

  sendToUser(hub: string, userId: string, payload: Payload): void {
    const units = billedMessageUnits(payload);
    for (const connection of this.registry.ofUser(hub, userId)) this.deliver(connection, payload, units);
  }

  /** Sends to every connection in the group except the `excluded` connection ids. */
  sendToGroup(hub: string, group: string, payload: Payload, excluded: readonly string[] = []): void {
    const units = billedMessageUnits(payload);
    for (const connection of this.registry.inGroup(hub, group)) {
      if (!excluded.includes(connection.id)) this.deliver(connection, payload, units, group);
    }
  }

  /** Adds a connection to a group (REST or a permitted client joinGroup); false when there is no such connection. */
  addToGroup(hub: string, group: string, connectionId: string): boolean {
    const connection = this.registry.find(hub, connectionId);
    return connection !== undefined && this.registry.join(connection, group);
  }

  /** Removes a connection from a group; a connection that is not in it (or gone) is already out. */
  removeFromGroup(hub: string, group: string, connectionId: string): void {
    const connection = this.registry.find(hub, connectionId);
    if (connection) this.registry.leave(connection, group);
  }

  /** Whether any connection is in the group. */
  groupExists(hub: string, group: string): boolean {
    return this.registry.inGroup(hub, group).length > 0;
  }

  connectionIds(): string[] {
    return this.registry.all().map((connection) => connection.id);
  }

  /** Closes a connection for good (REST closeConnection); false when there is no such connection. */
  closeConnection(hub: string, connectionId: string, reason: string): boolean {
    const connection = this.registry.find(hub, connectionId);
    if (connection) this.disconnect(connection, reason);
    return connection !== undefined;
  }

  /** Whether the service still holds the connection (with a socket, or waiting for a resume). */
  connectionExists(hub: string, connectionId: string): boolean {
    return this.registry.find(hub, connectionId) !== undefined;
  }

  // --- internals -------------------------------------------------------------------------------------------

  private deliver(connection: ClientConnection, payload: Payload, units: number, group?: string): void {
    this.delivered.deliveredMessages += 1;
    this.delivered.deliveredMessageUnits += units;
    if (connection.deliver(payload, group) === 'overflow') {
      this.disconnect(connection, 'Too many unacknowledged messages: the client must send sequenceAck.');
    }
  }

  private afterDetach(connection: ClientConnection): void {
    if (connection.kind !== 'reliable') {
      this.registry.remove(connection);
      return;
    }
    this.clearGrace(connection);
    const timer = setTimeout(() => {
      this.graceTimers.delete(connection.id);
      if (!connection.attached) this.registry.remove(connection);
    }, this.options.reconnectGraceMs);
    // A session waiting for its client must not keep the process alive.
    timer.unref();
    this.graceTimers.set(connection.id, timer);
  }

  private clearGrace(connection: ClientConnection): void {
    const timer = this.graceTimers.get(connection.id);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.graceTimers.delete(connection.id);
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

/** WebSocket close reasons are limited to 123 bytes. */
function closeReason(reason: string): string {
  let text = reason;
  while (Buffer.byteLength(text) > 123) text = text.slice(0, -1);
  return text;
}
