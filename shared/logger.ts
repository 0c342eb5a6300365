// The logger a use-case writes to. An invocation's InvocationContext is one; use-cases never depend on the
// Functions SDK for it.
export interface Logger {
  log(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}
