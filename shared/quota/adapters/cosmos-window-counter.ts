// One user's count in one time window, a document of the `quotas` container counted by a conditional patch (incr
// while below max) and created by the window's first count: the message counter and the search counter are two.
import type { Container } from '@azure/cosmos';
import type { z } from 'zod';
import { DependencyError } from '../../errors.js';
import { readItem } from '../../cosmos/adapters/cosmos-items.js';
import { conditionNumber, patchItem, writeOnVersion } from '../../cosmos/adapters/cosmos-patch.js';
import type { MessageCountOutcome } from '../quota-state.js';

/** Only a create can lose (to another create, whose document the next patch counts in): a few tries suffice. */
const COUNT_ATTEMPTS = 8;

/** The fields every window counter's document has. */
export interface WindowDocument {
  id: string;
  kind: string;
  userId: string;
  windowStart: string;
  count: number;
  ttl: number;
}

/** Which counter: its document's id for the window and kind, its schema, and its name in errors. */
export interface WindowCounter<D extends WindowDocument> {
  id: (windowStart: Date) => string;
  kind: D['kind'];
  schema: z.ZodType<D>;
  /** 'the message counter'. */
  what: string;
}

/** Counts one in the user's window starting at `window.start` if fewer than `max` are counted there. */
export async function countInWindow<D extends WindowDocument>(
  container: Container,
  counter: WindowCounter<D>,
  userId: string,
  window: { start: Date; seconds: number },
  max: number,
): Promise<MessageCountOutcome> {
  const id = counter.id(window.start);
  for (let attempt = 0; attempt < COUNT_ATTEMPTS; attempt += 1) {
    const patched = await patchItem(
      container,
      id,
      userId,
      [{ op: 'incr', path: '/count', value: 1 }],
      `FROM c WHERE c.count < ${conditionNumber(max)}`,
      counter.what,
    );
    if (patched === 'patched') return { counted: true };
    if (patched === 'unmet') {
      const read = await readItem(container, id, userId, counter.what, counter.schema);
      return { counted: false, count: read?.resource.count ?? max };
    }
    // The window's first count creates its document; a create that loses the race patches the winner's.
    const document = counter.schema.parse({
      id,
      kind: counter.kind,
      userId,
      windowStart: window.start.toISOString(),
      count: 1,
      ttl: window.seconds * 2,
    });
    if ((await writeOnVersion(container, document, userId, undefined, counter.what)) !== 'conflict')
      return { counted: true };
  }
  throw new DependencyError(
    'cosmos',
    `Too many requests of this user changed ${counter.what} at once; try again.`,
  );
}
