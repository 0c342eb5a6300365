// The port that removes what a conversation left outside history's own containers when it is deleted: its turns'
// data in the hot store and the turn-events container (working memory, turn records, tool results, streamed
// events, stream tickets) and the front door's records of the messages posted to it. It also names those posted
// messages, so the delete can purge their turns' orchestrations. The session document itself is the session
// store's. Adapter: Cosmos DB (adapters/cosmos-conversation-eraser.ts).

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
