// One Service Bus topic and its subscriptions, as listed in the generated definitions (service-bus.bicep loops it).
type subscriptionDefinition = {
  name: string
  requiresSession: bool
  maxDeliveryCount: int
  deadLetteringOnMessageExpiration: bool
}

type topicDefinition = {
  name: string
  requiresDuplicateDetection: bool
  duplicateDetectionHistoryTimeWindow: string
  subscriptions: subscriptionDefinition[]
}

param namespaceName string
param topic topicDefinition

resource serviceBusNamespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: namespaceName
}

resource topicResource 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' = {
  parent: serviceBusNamespace
  name: topic.name
  properties: {
    requiresDuplicateDetection: topic.requiresDuplicateDetection
    duplicateDetectionHistoryTimeWindow: topic.duplicateDetectionHistoryTimeWindow
  }
}

resource subscriptions 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2024-01-01' = [for sub in topic.subscriptions: {
  parent: topicResource
  name: sub.name
  properties: {
    requiresSession: sub.requiresSession
    maxDeliveryCount: sub.maxDeliveryCount
    deadLetteringOnMessageExpiration: sub.deadLetteringOnMessageExpiration
  }
}]

output name string = topicResource.name
