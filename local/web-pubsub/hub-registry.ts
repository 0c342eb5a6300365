// Index of live connections: by id, and per hub by user and by group, so a send touches only the connections it
// addresses. Hub names are case-insensitive, group names case-sensitive, as in the service.
import type { ClientConnection } from './client-connection.js';

export class HubRegistry {
  private readonly byId = new Map<string, ClientConnection>();
  /** hub (lower case) → user id → that user's connections in the hub. */
  private readonly users = new Map<string, Map<string, Set<ClientConnection>>>();
  /** hub (lower case) → group → the connections in that group. */
  private readonly groups = new Map<string, Map<string, Set<ClientConnection>>>();

  all(): ClientConnection[] {
    return [...this.byId.values()];
  }

  add(connection: ClientConnection): void {
    this.byId.set(connection.id, connection);
    if (connection.userId === undefined) return;
    const key = hubKey(connection.hub);
    const hubUsers = this.users.get(key) ?? new Map<string, Set<ClientConnection>>();
    this.users.set(key, hubUsers);
    const connections = hubUsers.get(connection.userId) ?? new Set<ClientConnection>();
    hubUsers.set(connection.userId, connections);
    connections.add(connection);
  }

  remove(connection: ClientConnection): void {
    if (this.byId.get(connection.id) !== connection) return;
    this.byId.delete(connection.id);
    // A connection that is gone is in no group any more.
    for (const group of [...connection.groups]) this.leave(connection, group);
    if (connection.userId === undefined) return;
    removeFromIndex(this.users, hubKey(connection.hub), connection.userId, connection);
  }

  /** Puts a registered connection in a group; false when it is not registered (gone, or never was). */
  join(connection: ClientConnection, group: string): boolean {
    if (this.byId.get(connection.id) !== connection) return false;
    const key = hubKey(connection.hub);
    const hubGroups = this.groups.get(key) ?? new Map<string, Set<ClientConnection>>();
    this.groups.set(key, hubGroups);
    const members = hubGroups.get(group) ?? new Set<ClientConnection>();
    hubGroups.set(group, members);
    members.add(connection);
    connection.groups.add(group);
    return true;
  }

  leave(connection: ClientConnection, group: string): void {
    connection.groups.delete(group);
    removeFromIndex(this.groups, hubKey(connection.hub), group, connection);
  }

  inGroup(hub: string, group: string): ClientConnection[] {
    return [...(this.groups.get(hubKey(hub))?.get(group) ?? [])];
  }

  /** A connection of any hub (the test hook addresses connections by id alone). */
  byConnectionId(connectionId: string): ClientConnection | undefined {
    return this.byId.get(connectionId);
  }

  find(hub: string, connectionId: string): ClientConnection | undefined {
    const connection = this.byId.get(connectionId);
    return connection && hubKey(connection.hub) === hubKey(hub) ? connection : undefined;
  }

  ofUser(hub: string, userId: string): ClientConnection[] {
    return [...(this.users.get(hubKey(hub))?.get(userId) ?? [])];
  }
}

function removeFromIndex(
  index: Map<string, Map<string, Set<ClientConnection>>>,
  hub: string,
  name: string,
  connection: ClientConnection,
): void {
  const byName = index.get(hub);
  const connections = byName?.get(name);
  if (!byName || !connections) return;
  connections.delete(connection);
  if (connections.size === 0) byName.delete(name);
  if (byName.size === 0) index.delete(hub);
}

function hubKey(hub: string): string {
  return hub.toLowerCase();
}
