// The role vocabulary of Web PubSub client tokens: `webpubsub.joinLeaveGroup` / `webpubsub.sendToGroup` grant a
// permission for every group, the `.<group>` forms for one group only.

export type Permission = 'joinLeaveGroup' | 'sendToGroup';

const permissions: readonly Permission[] = ['joinLeaveGroup', 'sendToGroup'];

export function parsePermission(value: string): Permission | undefined {
  return permissions.find((permission) => permission === value);
}

/** The role string that grants `permission`, for one group when `group` is given, else for all groups. */
export function roleFor(permission: Permission, group?: string): string {
  return group === undefined ? `webpubsub.${permission}` : `webpubsub.${permission}.${group}`;
}

export function hasPermission(roles: ReadonlySet<string>, permission: Permission, group: string): boolean {
  return roles.has(roleFor(permission)) || roles.has(roleFor(permission, group));
}
