// Mounts a Service Bus-triggered function on the local broker: every delivery reaches the same handler with
// the body and InvocationContext the Functions host would build; a throw abandons the message for redelivery.
import azureFunctions from '@azure/functions';
import type { FunctionTrigger, InvocationContext, LogHandler } from '@azure/functions';
import { toTriggerInvocation } from './trigger-invocation.js';
import { SERVICE_BUS_CONNECTION } from '../../shared/messaging/service-bus-entities.js';
import type { LocalServiceBus, MessageSource } from './local-service-bus.js';

export interface ServiceBusTriggerBinding {
  functionName: string;
  source: MessageSource;
  isSessionsEnabled: boolean;
  handler: (message: unknown, context: InvocationContext) => Promise<unknown>;
  /** Receives the handler's context.log output and the host-style failure lines. */
  logHandler?: LogHandler | undefined;
  /** The connection setting prefix the function is registered with; default SERVICE_BUS_CONNECTION. */
  connection?: string;
  maxConcurrentSessions?: number | undefined;
  maxConcurrentCalls?: number | undefined;
}

/** Returns a function that detaches the trigger, waiting for running invocations. */
export function attachServiceBusTrigger(
  bus: LocalServiceBus,
  binding: ServiceBusTriggerBinding,
): () => Promise<void> {
  const trigger = registeredTrigger(binding);
  return bus.receive(
    binding.source,
    async (message) => {
      const started = Date.now();
      const { trigger: input, context } = toTriggerInvocation(message, binding.functionName, {
        trigger,
        logHandler: binding.logHandler,
      });
      try {
        await binding.handler(input, context);
      } catch (error) {
        binding.logHandler?.(
          'error',
          `Executed 'Functions.${binding.functionName}' (Failed, Id=${context.invocationId}, ` +
            `Duration=${Date.now() - started}ms, DeliveryCount=${message.deliveryCount})`,
          error,
        );
        throw error;
      }
    },
    {
      isSessionsEnabled: binding.isSessionsEnabled,
      maxConcurrentSessions: binding.maxConcurrentSessions,
      maxConcurrentCalls: binding.maxConcurrentCalls,
    },
  );
}

/**
 * The trigger binding as `context.options.trigger` reports it. @azure/functions names a binding after a hash
 * of its options, so they are built in the order functions/index.ts registers them.
 */
function registeredTrigger(binding: ServiceBusTriggerBinding): FunctionTrigger {
  const connection = binding.connection ?? SERVICE_BUS_CONNECTION;
  const { isSessionsEnabled, source } = binding;
  const { type, name } =
    'queueName' in source
      ? azureFunctions.trigger.serviceBusQueue({ connection, isSessionsEnabled, queueName: source.queueName })
      : azureFunctions.trigger.serviceBusTopic({
          connection,
          isSessionsEnabled,
          topicName: source.topicName,
          subscriptionName: source.subscriptionName,
        });
  return { type, name, direction: 'in' };
}
