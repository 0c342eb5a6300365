// Service Bus namespace (Standard: sessions, topics and duplicate detection need it) with the queues and topics of
// shared/app/service-bus-entities.ts, read from the generated definitions. Keys are off; the identity owns the data plane.
param name string
param location string
param tags object

@description('Principal id of the managed identity the function app runs as.')
param principalId string

@description('Name of that identity, known before it exists: it seeds the role assignment names (its principal id is known only at deployment).')
param identityName string

var definitions = loadJsonContent('../generated/definitions.json')

// Granted on the namespace so that it covers every queue and topic subscription the triggers listen on. Data Owner,
// not only Data Sender and Data Receiver: the Functions scale controller sizes the app from each entity's message
// count, which Service Bus serves only to the Manage right. The Azure Functions docs list Data Receiver or Data Owner
// for the trigger (Service Bus bindings, "Identity-based connections": grant permission to the identity) and say
// that with Listen rights alone "scaling isn't as accurate because the queue length can't be used" (Event-driven
// scaling, "Scaling behaviors"); Data Owner is the Manage right of identity-based connections. It also covers the
// app's own sends, so it is the one role.
var roles = [
  {
    name: 'Azure Service Bus Data Owner'
    id: '090c5cfd-751d-490a-894a-3ce6f1109419'
  }
]

resource serviceBusNamespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: 'Standard'
    tier: 'Standard'
  }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
  }
}

resource queues 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = [for queue in definitions.serviceBus.queues: {
  parent: serviceBusNamespace
  name: queue.name
  properties: {
    requiresSession: queue.requiresSession
    requiresDuplicateDetection: queue.requiresDuplicateDetection
    duplicateDetectionHistoryTimeWindow: queue.duplicateDetectionHistoryTimeWindow
    maxDeliveryCount: queue.maxDeliveryCount
    deadLetteringOnMessageExpiration: queue.deadLetteringOnMessageExpiration
  }
}]

// A module per topic lets its subscriptions loop with the topic as their parent.
module topics './service-bus-topic.bicep' = [for topic in definitions.serviceBus.topics: {
  name: take('${name}-topic-${topic.name}', 64)
  params: {
    namespaceName: serviceBusNamespace.name
    topic: topic
  }
}]

resource roleAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for role in roles: {
  name: guid(serviceBusNamespace.id, identityName, role.id)
  scope: serviceBusNamespace
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.id)
    principalId: principalId
    principalType: 'ServicePrincipal'
    description: '${role.name}: the chat API enqueues, the workers consume and the scale controller reads message counts with the managed identity.'
  }
}]

output name string = serviceBusNamespace.name
output id string = serviceBusNamespace.id
// serviceBusEndpoint is https://<name>.<cloud suffix>:443/; the host name alone is the fully qualified namespace.
output fullyQualifiedNamespace string = split(split(serviceBusNamespace.properties.serviceBusEndpoint, '/')[2], ':')[0]
