// What the service does to connections, whoever asks (REST or a client frame): the fan-out of every send,
// group membership, closing, permissions, and a connection's life across sockets - open, drop, resume within
// the grace period, expiry.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  ClientConnection,
  type ClientKind,
  type ClientTransport,
  type ConnectionLimits,
} from './client-connection.js';
import { disconnectedFrame, type Delivery } from './client-messages.js';
import { HubRegistry } from './hub-registry.js';
import type { Payload } from './payload.js';
import { hasPermission, roleFor, type Permission } from './permissions.js';

export interface HubServiceOptions {
  /** How long a dropped reliable connection keeps its session (groups, unacknowledged messages). */
  reconnectGraceMs: number;
  limits?: ConnectionLimits;
}

export interface OpenRequest {
  hub: string;
  kind: ClientKind;
  userId: string | undefined;
  roles: readonly string[];
  groups: readonly string[];
}

export type ResumeResult = { ok: true; connection: ClientConnection } | { ok: false; reason: string };

export interface GroupMember {
  connectionId: string;
  userId?: string;
}

/** Close code that tells a client its session is gone and must not be resumed (client spec §1.4). */
export const SESSION_ENDED = 1008;
const GOING_AWAY = 1001;

export class HubService {
  private readonly registry = new HubRegistry();
  private readonly graceTimers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly options: HubServiceOptions) {}

  stats(): { connections: number; hubs: number } {
    return {
      connections: this.registry.all().filter((c) => c.attached).length,
      hubs: this.registry.hubCount,
    };
  }

  // --- connection lifetime ---------------------------------------------------------------------------------

  open(request: OpenRequest, transport: ClientTransport): ClientConnection {
    const connection = new ClientConnection({
      id: randomBytes(16).toString('base64url'),
      hub: request.hub,
      userId: request.userId,
      kind: request.kind,
      roles: request.roles,
      reconnectionToken: request.kind === 'reliable' ? randomBytes(32).toString('base64url') : undefined,
      ...(this.options.limits ? { limits: this.options.limits } : {}),
    });
    this.registry.add(connection);
    for (const group of request.groups) this.registry.join(connection, group);
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
    if (connection.kind !== 'simple') transport.send(disconnectedFrame(reason));
    transport.close(code, closeReason(reason));
  }

  shutdown(reason: string): void {
    for (const connection of this.registry.all()) this.disconnect(connection, reason, GOING_AWAY);
  }

  // --- sends -----------------------------------------------------------------------------------------------

  sendToAll(hub: string, payload: Payload, excluded: ReadonlySet<string>): void {
    this.fanOut(
      this.registry.inHub(hub).filter((c) => !excluded.has(c.id)),
      { from: 'server', payload },
    );
  }

  sendToUser(hub: string, userId: string, payload: Payload): void {
    this.fanOut(this.registry.ofUser(hub, userId), { from: 'server', payload });
  }

  sendToConnection(hub: string, connectionId: string, payload: Payload): void {
    const connection = this.registry.find(hub, connectionId);
    if (connection) this.fanOut([connection], { from: 'server', payload });
  }

  /** A server broadcast to a group reaches members as a group message (no `fromUserId`), as in the service. */
  sendToGroup(hub: string, group: string, payload: Payload, excluded: ReadonlySet<string>): void {
    this.fanOut(
      this.registry.ofGroup(hub, group).filter((c) => !excluded.has(c.id)),
      { from: 'group', group, payload },
    );
  }

  publishFromClient(sender: ClientConnection, group: string, payload: Payload, noEcho: boolean): void {
    const delivery: Delivery =
      sender.userId === undefined
        ? { from: 'group', group, payload }
        : { from: 'group', group, fromUserId: sender.userId, payload };
    this.fanOut(
      this.registry.ofGroup(sender.hub, group).filter((c) => !(noEcho && c === sender)),
      delivery,
    );
  }

  // --- groups ----------------------------------------------------------------------------------------------

  join(connection: ClientConnection, group: string): void {
    this.registry.join(connection, group);
  }

  leave(connection: ClientConnection, group: string): void {
    this.registry.leave(connection, group);
  }

  addConnectionToGroup(hub: string, group: string, connectionId: string): boolean {
    const connection = this.registry.find(hub, connectionId);
    if (connection) this.registry.join(connection, group);
    return connection !== undefined;
  }

  removeConnectionFromGroup(hub: string, group: string, connectionId: string): void {
    const connection = this.registry.find(hub, connectionId);
    if (connection) this.registry.leave(connection, group);
  }

  removeConnectionFromAllGroups(hub: string, connectionId: string): void {
    const connection = this.registry.find(hub, connectionId);
    if (connection) for (const group of [...connection.groups]) this.registry.leave(connection, group);
  }

  /** Applies to the user's current connections. */
  addUserToGroup(hub: string, group: string, userId: string): void {
    for (const connection of this.registry.ofUser(hub, userId)) this.registry.join(connection, group);
  }

  removeUserFromGroup(hub: string, group: string, userId: string): void {
    for (const connection of this.registry.ofUser(hub, userId)) this.registry.leave(connection, group);
  }

  removeUserFromAllGroups(hub: string, userId: string): void {
    for (const connection of this.registry.ofUser(hub, userId)) {
      for (const group of [...connection.groups]) this.registry.leave(connection, group);
    }
  }

  addConnectionsToGroups(hub: string, groups: readonly string[]): void {
    for (const connection of this.registry.inHub(hub))
      for (const g of groups) this.registry.join(connection, g);
  }

  removeConnectionsFromGroups(hub: string, groups: readonly string[]): void {
    for (const connection of this.registry.inHub(hub))
      for (const g of groups) this.registry.leave(connection, g);
  }

  // --- closing ---------------------------------------------------------------------------------------------

  closeAll(hub: string, excluded: ReadonlySet<string>, reason: string): void {
    this.closeEach(this.registry.inHub(hub), excluded, reason);
  }

  closeUser(hub: string, userId: string, excluded: ReadonlySet<string>, reason: string): void {
    this.closeEach(this.registry.ofUser(hub, userId), excluded, reason);
  }

  closeGroup(hub: string, group: string, excluded: ReadonlySet<string>, reason: string): void {
    this.closeEach(this.registry.ofGroup(hub, group), excluded, reason);
  }

  closeConnection(hub: string, connectionId: string, reason: string): void {
    const connection = this.registry.find(hub, connectionId);
    if (connection) this.disconnect(connection, reason);
  }

  // --- permissions -----------------------------------------------------------------------------------------

  grantPermission(hub: string, connectionId: string, permission: Permission, target?: string): boolean {
    const connection = this.registry.find(hub, connectionId);
    connection?.roles.add(roleFor(permission, target));
    return connection !== undefined;
  }

  revokePermission(hub: string, connectionId: string, permission: Permission, target?: string): void {
    this.registry.find(hub, connectionId)?.roles.delete(roleFor(permission, target));
  }

  /** undefined when the connection does not exist. */
  checkPermission(
    hub: string,
    connectionId: string,
    permission: Permission,
    target?: string,
  ): boolean | undefined {
    const connection = this.registry.find(hub, connectionId);
    if (!connection) return undefined;
    return target === undefined
      ? connection.roles.has(roleFor(permission))
      : hasPermission(connection.roles, permission, target);
  }

  // --- queries ---------------------------------------------------------------------------------------------

  connectionExists(hub: string, connectionId: string): boolean {
    return this.registry.find(hub, connectionId) !== undefined;
  }

  userExists(hub: string, userId: string): boolean {
    return this.registry.ofUser(hub, userId).length > 0;
  }

  groupExists(hub: string, group: string): boolean {
    return this.registry.ofGroup(hub, group).length > 0;
  }

  groupMembers(hub: string, group: string): GroupMember[] {
    return this.registry
      .ofGroup(hub, group)
      .map((c) =>
        c.userId === undefined ? { connectionId: c.id } : { connectionId: c.id, userId: c.userId },
      );
  }

  // --- internals -------------------------------------------------------------------------------------------

  private fanOut(targets: readonly ClientConnection[], delivery: Delivery): void {
    for (const connection of targets) {
      if (connection.deliver(delivery) === 'overflow') {
        this.disconnect(connection, 'Too many unacknowledged messages: the client must send sequenceAck.');
      }
    }
  }

  private closeEach(
    targets: readonly ClientConnection[],
    excluded: ReadonlySet<string>,
    reason: string,
  ): void {
    for (const connection of targets) if (!excluded.has(connection.id)) this.disconnect(connection, reason);
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
