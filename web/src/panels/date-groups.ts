// The sidebar's date groups: a conversation sits under Today, Yesterday, Previous 7 days, Previous 30 days or
// Older, by its last activity in the user's own calendar.
export const DATE_GROUPS = ['Today', 'Yesterday', 'Previous 7 days', 'Previous 30 days', 'Older'] as const;
export type DateGroup = (typeof DATE_GROUPS)[number];

const DAY_MS = 86_400_000;

function startOfDay(date: Date): number {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime();
}

export function dateGroup(iso: string, now = new Date()): DateGroup {
  const time = new Date(iso).getTime();
  if (Number.isNaN(time)) return 'Older';
  const today = startOfDay(now);
  if (time >= today) return 'Today';
  // Days counted from midnight to midnight, so a daylight-saving change does not move a conversation.
  const days = Math.round((today - startOfDay(new Date(time))) / DAY_MS);
  if (days <= 1) return 'Yesterday';
  if (days <= 7) return 'Previous 7 days';
  if (days <= 30) return 'Previous 30 days';
  return 'Older';
}

/** Items already newest first, split into their date groups in that order; empty groups left out. */
export function groupByDate<T>(
  items: readonly T[],
  when: (item: T) => string,
  now = new Date(),
): { group: DateGroup; items: T[] }[] {
  const groups = new Map<DateGroup, T[]>();
  for (const item of items) {
    const group = dateGroup(when(item), now);
    const list = groups.get(group);
    if (list === undefined) groups.set(group, [item]);
    else list.push(item);
  }
  return DATE_GROUPS.flatMap((group) => {
    const list = groups.get(group);
    return list === undefined ? [] : [{ group, items: list }];
  });
}
