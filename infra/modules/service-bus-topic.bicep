// One Service Bus topic and its subscriptions, as listed in the generated definitions (service-bus.bicep loops it).
// Every subscription takes the topic's subscriptionSettings: a time to live that bounds what a subscription whose
// consumer stopped can hold, and no dead-lettering of what expires (shared/messaging/service-bus-entities.ts SUBSCRIPTION_MESSAGE_TTL and
// scripts/generate-definitions.ts say why).
type subscriptionDefinition = {
  name: string
  requiresSession: bool
}

type subscriptionSettings = {
  maxDeliveryCount: int
  @description('ISO 8601 duration.')
  defaultMessageTimeToLive: string
  deadLetteringOnMessageExpiration: bool
}

type topicDefinition = {
  name: string
  requiresDuplicateDetection: bool
  duplicateDetectionHistoryTimeWindow: string
  subscriptionSettings: subscriptionSettings
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
    maxDeliveryCount: topic.subscriptionSettings.maxDeliveryCount
    defaultMessageTimeToLive: topic.subscriptionSettings.defaultMessageTimeToLive
    deadLetteringOnMessageExpiration: topic.subscriptionSettings.deadLetteringOnMessageExpiration
  }
}]

output name string = topicResource.name
