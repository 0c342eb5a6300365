// The port through which quotas read what a user has used: tokens per UTC day and US dollars per UTC month, as the
// usage records kept for every model call count them. The usage area implements it; the composition wires it.
export interface UsageReader {
  /** Tokens (input + output, all kinds) the user used in the UTC day holding `at`. */
  tokensOnDay(userId: string, at: Date): Promise<number>;
  /** US dollars the user spent in the UTC month holding `at`. */
  costInMonth(userId: string, at: Date): Promise<number>;
}

/** The reader while no usage is recorded: nothing used, so only the limits that read state of their own apply. */
export const NO_USAGE: UsageReader = {
  tokensOnDay: () => Promise.resolve(0),
  costInMonth: () => Promise.resolve(0),
};
