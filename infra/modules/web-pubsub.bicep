// Azure Web PubSub: the hub the chat events stream through, named in the generated definitions. Access keys are
// off; the app publishes and mints client tokens with the managed identity (Web PubSub Service Owner).
param name string
param location string
param tags object

@allowed([
  'Free_F1'
  'Standard_S1'
])
param skuName string = 'Standard_S1'

@description('Principal id of the managed identity the function app runs as.')
param principalId string

@description('Name of that identity, known before it exists: it seeds the role assignment names (its principal id is known only at deployment).')
param identityName string

// One unit; the alerts read the connection limit from the output below, so raising it here moves their threshold.
var capacity = 1

var definitions = loadJsonContent('../generated/definitions.json')
var webPubSubServiceOwnerRoleId = '12cf5a90-567b-43ae-8102-96cf46c7d9b4'

resource webPubSub 'Microsoft.SignalRService/webPubSub@2024-03-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: skuName
    tier: skuName == 'Free_F1' ? 'Free' : 'Standard'
    capacity: capacity
  }
  properties: {
    disableLocalAuth: true
    disableAadAuth: false
    publicNetworkAccess: 'Enabled'
    tls: {
      clientCertEnabled: false
    }
  }
}

resource hub 'Microsoft.SignalRService/webPubSub/hubs@2024-03-01' = {
  parent: webPubSub
  name: definitions.webPubSub.hub
  properties: {
    // Clients connect only with a token the app minted for their user id.
    anonymousConnectPolicy: 'deny'
    eventHandlers: []
  }
}

resource serviceOwner 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(webPubSub.id, identityName, webPubSubServiceOwnerRoleId)
  scope: webPubSub
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', webPubSubServiceOwnerRoleId)
    principalId: principalId
    principalType: 'ServicePrincipal'
    description: 'Web PubSub Service Owner: the app sends events and generates client access tokens.'
  }
}

output name string = webPubSub.name
output endpoint string = 'https://${webPubSub.properties.hostName}'
output hub string = hub.name
// Concurrent connections the SKU accepts per unit (Free_F1 20, Standard_S1 1,000) times the units.
output connectionLimit int = (skuName == 'Free_F1' ? 20 : 1000) * capacity
