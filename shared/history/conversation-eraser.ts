// The port that removes what a deleted conversation left outside history's own containers (its turns' data in the
// hot store and turn events, the records of the messages posted to it), and names those posted messages so the
// delete can purge their orchestrations. Adapter: adapters/cosmos-conversation-eraser.ts.

export interface ConversationEraser {
  /** The chatMessageIds of the messages posted to the session (its posted records), oldest first. */
  postedMessageIds(userId: string, sessionId: string): Promise<string[]>;
  /**
   * Removes every item of the session in the hot store and in turn-events; returns how many. The caller has
   * checked that the session is the caller's: these containers are keyed by session only.
   */
  eraseTurnData(sessionId: string): Promise<number>;
  /** Removes the session's posted records (in its owner's partition); returns how many. */
  erasePosted(userId: string, sessionId: string): Promise<number>;
}
