// Service Bus namespace (Standard: sessions, topics and duplicate detection need it) with the queues and topics of
// shared/resources.ts, read from the generated definitions. Keys are off; the identity may send and receive.
param name string
param location string
param tags object

@description('Principal id of the managed identity the function app runs as.')
param principalId string

var definitions = loadJsonContent('../generated/definitions.json')

// Granted on the namespace so that they cover every queue and topic subscription the triggers listen on.
var roles = [
  {
    name: 'Azure Service Bus Data Sender'
    id: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
  }
  {
    name: 'Azure Service Bus Data Receiver'
    id: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
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
  name: guid(serviceBusNamespace.id, principalId, role.id)
  scope: serviceBusNamespace
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.id)
    principalId: principalId
    principalType: 'ServicePrincipal'
    description: '${role.name}: the chat API enqueues and the workers consume with the managed identity.'
  }
}]

output name string = serviceBusNamespace.name
// serviceBusEndpoint is https://<name>.<cloud suffix>:443/; the host name alone is the fully qualified namespace.
output fullyQualifiedNamespace string = split(split(serviceBusNamespace.properties.serviceBusEndpoint, '/')[2], ':')[0]
