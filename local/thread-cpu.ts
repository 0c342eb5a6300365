// The CPU time of the calling thread, read from Linux's /proc, for the local runtime's diagnostics and the bench.
import { readFileSync } from 'node:fs';

/** CPU ms (user + system) of the calling thread, from /proc; undefined where there is none. */
export function threadCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, in clock ticks of 10 ms (USER_HZ is 100 on Linux), are the 14th and 15th fields.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}
