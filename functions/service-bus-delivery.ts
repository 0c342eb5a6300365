// What a Service Bus trigger learns of its delivery: how often the message has been delivered, from the trigger
// metadata (workers give a failing dependency a few deliveries before they settle a message for good).
import type { InvocationContext } from '@azure/functions';

/** Service Bus counts deliveries from 1; the trigger metadata carries it (absent outside a real delivery). */
export function deliveryCount(context: InvocationContext): number {
  const count = context.triggerMetadata?.['deliveryCount'];
  return typeof count === 'number' && Number.isInteger(count) && count >= 1 ? count : 1;
}
