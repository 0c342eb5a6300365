// Azure OpenAI with a chat and an embedding deployment. Keys are off; the managed identity calls it as
// Cognitive Services OpenAI User. main.bicep skips this module when an existing endpoint is given.
param name string
param location string
param tags object

@allowed([
  'GlobalStandard'
  'DataZoneStandard'
  'Standard'
])
param chatDeploymentSkuName string = 'GlobalStandard'

@allowed([
  'GlobalStandard'
  'DataZoneStandard'
  'Standard'
])
param embeddingDeploymentSkuName string = 'GlobalStandard'

param chatDeploymentName string
param chatModelName string
param chatModelVersion string

@description('Thousands of tokens per minute.')
param chatDeploymentCapacity int

param embeddingDeploymentName string
param embeddingModelName string
param embeddingModelVersion string

@description('Thousands of tokens per minute.')
param embeddingDeploymentCapacity int

@description('Principal id of the managed identity the function app runs as.')
param principalId string

@description('Name of that identity, known before it exists: it seeds the role assignment names (its principal id is known only at deployment).')
param identityName string

var openAiUserRoleId = '5e0bd9bd-7b93-4f28-af87-19fc36ad61bd'

resource account 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
  name: name
  location: location
  tags: tags
  kind: 'OpenAI'
  sku: {
    name: 'S0'
  }
  properties: {
    // Entra ID tokens are only accepted on a custom subdomain endpoint.
    customSubDomainName: name
    disableLocalAuth: true
    publicNetworkAccess: 'Enabled'
  }
}

resource chatDeployment 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = {
  parent: account
  name: chatDeploymentName
  sku: {
    name: chatDeploymentSkuName
    capacity: chatDeploymentCapacity
  }
  properties: {
    model: {
      format: 'OpenAI'
      name: chatModelName
      version: chatModelVersion
    }
  }
}

resource embeddingDeployment 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = {
  parent: account
  name: embeddingDeploymentName
  sku: {
    name: embeddingDeploymentSkuName
    capacity: embeddingDeploymentCapacity
  }
  properties: {
    model: {
      format: 'OpenAI'
      name: embeddingModelName
      version: embeddingModelVersion
    }
  }
  // The account accepts one deployment operation at a time.
  dependsOn: [
    chatDeployment
  ]
}

resource openAiUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, identityName, openAiUserRoleId)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', openAiUserRoleId)
    principalId: principalId
    principalType: 'ServicePrincipal'
    description: 'Cognitive Services OpenAI User: the app calls chat completions and embeddings.'
  }
}

output name string = account.name
output endpoint string = account.properties.endpoint
output chatDeploymentName string = chatDeployment.name
output embeddingDeploymentName string = embeddingDeployment.name
