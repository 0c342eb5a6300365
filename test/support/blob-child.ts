// Run in a child process by the Blob emulator's orphan test: starts the local Blob Storage, prints "azurite <pid>",
// and waits until it is killed.
import { startLocalBlob } from '../../local/blob/local-azurite.js';

const blob = await startLocalBlob({ dataDir: undefined });
process.stdout.write(`azurite ${blob.pid ?? 'none'}\n`);
setInterval(() => undefined, 60_000);
