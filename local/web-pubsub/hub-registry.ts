// Index of live connections: by id, and per hub by user and by group, so every send and membership change
// touches only the connections it addresses. Hub names are case-insensitive, as in the service.
import type { ClientConnection } from './client-connection.js';

interface HubIndex {
  connections: Set<ClientConnection>;
  users: Map<string, Set<ClientConnection>>;
  groups: Map<string, Set<ClientConnection>>;
}

export class HubRegistry {
  private readonly byId = new Map<string, ClientConnection>();
  private readonly hubs = new Map<string, HubIndex>();

  get size(): number {
    return this.byId.size;
  }

  get hubCount(): number {
    return this.hubs.size;
  }

  all(): ClientConnection[] {
    return [...this.byId.values()];
  }

  add(connection: ClientConnection): void {
    this.byId.set(connection.id, connection);
    const hub = this.hubIndex(connection.hub, true);
    hub.connections.add(connection);
    if (connection.userId !== undefined) addTo(hub.users, connection.userId, connection);
  }

  remove(connection: ClientConnection): void {
    if (this.byId.get(connection.id) !== connection) return;
    this.byId.delete(connection.id);
    for (const group of [...connection.groups]) this.leave(connection, group);
    const hub = this.hubIndex(connection.hub, false);
    if (!hub) return;
    hub.connections.delete(connection);
    if (connection.userId !== undefined) removeFrom(hub.users, connection.userId, connection);
    if (hub.connections.size === 0) this.hubs.delete(hubKey(connection.hub));
  }

  /** A connection of any hub (the test hook addresses connections by id alone). */
  byConnectionId(connectionId: string): ClientConnection | undefined {
    return this.byId.get(connectionId);
  }

  find(hub: string, connectionId: string): ClientConnection | undefined {
    const connection = this.byId.get(connectionId);
    return connection && hubKey(connection.hub) === hubKey(hub) ? connection : undefined;
  }

  inHub(hub: string): ClientConnection[] {
    return [...(this.hubIndex(hub, false)?.connections ?? [])];
  }

  ofUser(hub: string, userId: string): ClientConnection[] {
    return [...(this.hubIndex(hub, false)?.users.get(userId) ?? [])];
  }

  ofGroup(hub: string, group: string): ClientConnection[] {
    return [...(this.hubIndex(hub, false)?.groups.get(group) ?? [])];
  }

  join(connection: ClientConnection, group: string): void {
    if (!this.byId.has(connection.id)) return;
    connection.groups.add(group);
    addTo(this.hubIndex(connection.hub, true).groups, group, connection);
  }

  leave(connection: ClientConnection, group: string): void {
    connection.groups.delete(group);
    const hub = this.hubIndex(connection.hub, false);
    if (hub) removeFrom(hub.groups, group, connection);
  }

  private hubIndex(hub: string, create: true): HubIndex;
  private hubIndex(hub: string, create: false): HubIndex | undefined;
  private hubIndex(hub: string, create: boolean): HubIndex | undefined {
    const key = hubKey(hub);
    let index = this.hubs.get(key);
    if (!index && create) {
      index = { connections: new Set(), users: new Map(), groups: new Map() };
      this.hubs.set(key, index);
    }
    return index;
  }
}

function hubKey(hub: string): string {
  return hub.toLowerCase();
}

function addTo(map: Map<string, Set<ClientConnection>>, key: string, connection: ClientConnection): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(connection);
}

function removeFrom(
  map: Map<string, Set<ClientConnection>>,
  key: string,
  connection: ClientConnection,
): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(connection);
  if (set.size === 0) map.delete(key);
}
