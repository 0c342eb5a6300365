// A user's totals over their conversations: conversations, messages and tokens used, and what the model calls cost.
import { roundUsd } from '../usage/prices.js';
import type { UsageLedger } from '../usage/usage-ledger.js';
import type { HistoryStats } from './contracts.js';
import type { ConversationHeaders } from './conversation-headers.js';

export async function historyStats(
  headers: ConversationHeaders,
  userId: string,
  usage?: Pick<UsageLedger, 'lifetime'>,
): Promise<HistoryStats> {
  const [totals, spent] = await Promise.all([headers.totals(userId), usage?.lifetime(userId)]);
  return {
    userId,
    ...totals,
    ...(spent
      ? {
          cost: {
            usd: roundUsd(spent.turns.costUsd + spent.background.costUsd),
            turnsUsd: spent.turns.costUsd,
            backgroundUsd: spent.background.costUsd,
          },
        }
      : {}),
  };
}
