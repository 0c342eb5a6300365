// Azure OpenAI with the chat deployments of the model catalogue and an embedding deployment. Keys are off; the managed
// identity calls it as Cognitive Services OpenAI User. main.bicep skips this module when an existing endpoint is given.
param name string
param location string
param tags object

@allowed([
  'GlobalStandard'
  'DataZoneStandard'
  'Standard'
])
param embeddingDeploymentSkuName string = 'GlobalStandard'

@minLength(1)
@description('The model catalogue\'s deployments, the default chat model first: each {name (the model id the app calls), model, version, sku (GlobalStandard, DataZoneStandard or Standard), capacity (thousands of tokens per minute)}.')
param chatDeployments array

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

// One at a time: Azure OpenAI refuses a deployment operation while another runs on the account.
@batchSize(1)
resource chatModels 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = [
  for deployment in chatDeployments: {
    parent: account
    name: deployment.name
    sku: {
      name: deployment.sku
      capacity: deployment.capacity
    }
    properties: {
      model: {
        format: 'OpenAI'
        name: deployment.model
        version: deployment.version
      }
    }
  }
]

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
    chatModels
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
output chatDeploymentNames array = [for (deployment, index) in chatDeployments: chatModels[index].name]
output embeddingDeploymentName string = embeddingDeployment.name
