// Index of live connections: by id, and per hub by user, so a send touches only the connections it addresses.
// Hub names are case-insensitive, as in the service.
import type { ClientConnection } from './client-connection.js';

export class HubRegistry {
  private readonly byId = new Map<string, ClientConnection>();
  /** hub (lower case) → user id → that user's connections in the hub. */
  private readonly users = new Map<string, Map<string, Set<ClientConnection>>>();

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
    if (connection.userId === undefined) return;
    const key = hubKey(connection.hub);
    const hubUsers = this.users.get(key);
    const connections = hubUsers?.get(connection.userId);
    if (!hubUsers || !connections) return;
    connections.delete(connection);
    if (connections.size === 0) hubUsers.delete(connection.userId);
    if (hubUsers.size === 0) this.users.delete(key);
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

function hubKey(hub: string): string {
  return hub.toLowerCase();
}
