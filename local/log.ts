// Console logging for the local runtime, in the shape of the Functions host's log levels.
import type { LogHandler, LogLevel } from '@azure/functions';

const order: Record<LogLevel, number> = {
  trace: 0,
  debug: 1,
  information: 2,
  warning: 3,
  error: 4,
  critical: 5,
  none: 6,
};

export function createLogHandler(minimum: LogLevel): LogHandler {
  return (level, ...args) => {
    if (order[level] < order[minimum]) return;
    const text = args.map((arg) => (typeof arg === 'string' ? arg : inspectArg(arg))).join(' ');
    const line = `${new Date().toISOString()} ${level.padEnd(11)} ${text}\n`;
    (order[level] >= order.warning ? process.stderr : process.stdout).write(line);
  };
}

function inspectArg(arg: unknown): string {
  if (arg instanceof Error) return arg.stack ?? arg.message;
  try {
    return JSON.stringify(arg);
  } catch {
    return String(arg);
  }
}
