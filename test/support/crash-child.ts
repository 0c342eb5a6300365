// Run in a child process by the crash tests: writes to a local store as fast as it can and prints "ack <id>" for
// each write the store has acknowledged, until it is killed. Usage: crash-child.ts cosmos|durable <data folder>.
import { join } from 'node:path';

import { createLocalCosmosClient, startLocalCosmos } from '../../local/cosmos/local-cosmos.js';
import { LocalDurableDriver } from '../../local/durable/local-durable-driver.js';

const [mode, folder] = process.argv.slice(2);
if (folder === undefined || (mode !== 'cosmos' && mode !== 'durable')) {
  throw new Error('usage: crash-child.ts cosmos|durable <data folder>');
}

/** Several writers at once, so acknowledgements share fsyncs as they do under load. */
const WRITERS = 4;

function ack(id: string): void {
  process.stdout.write(`ack ${id}\n`);
}

async function writeCosmos(dataFolder: string): Promise<void> {
  const local = await startLocalCosmos({ dataFile: join(dataFolder, 'cosmos.json') });
  const client = createLocalCosmosClient(local);
  const { database } = await client.databases.createIfNotExists({ id: 'crash' });
  const { container } = await database.containers.createIfNotExists({
    id: 'items',
    partitionKey: { paths: ['/pk'] },
  });
  process.stdout.write('ready\n');
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let i = 0; ; i++) {
        const id = `w${writer}-${i}`;
        await container.items.create({ id, pk: `p${i % 7}`, text: 'acknowledged means on disk' });
        ack(id);
      }
    }),
  );
}

async function writeDurable(dataFolder: string): Promise<void> {
  const driver = await LocalDurableDriver.open(
    {
      orchestrations: new Map([
        [
          'waits',
          function* (context: { df: { waitForExternalEvent(name: string): unknown } }) {
            return (yield context.df.waitForExternalEvent('never')) as unknown;
          } as never,
        ],
      ]),
      activities: new Map(),
    },
    { dataFile: join(dataFolder, 'durable.json'), logHandler: () => undefined },
  );
  process.stdout.write('ready\n');
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let i = 0; ; i++) {
        const id = `w${writer}-${i}`;
        await driver.startNew('waits', { instanceId: id, input: { i } });
        ack(id);
      }
    }),
  );
}

await (mode === 'cosmos' ? writeCosmos(folder) : writeDurable(folder));
