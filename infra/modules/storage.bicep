// Storage of the Functions host, the Durable Functions task hub (queues, tables, blobs) and the Flex Consumption
// deployment package. Shared keys are off: the managed identity gets blob, queue and table data roles.
param name string
param location string
param tags object

@description('Blob container the Flex Consumption app is deployed from.')
param deploymentContainerName string

@description('Blob container that keeps the files attached to messages.')
param attachmentsContainerName string = 'attachments'

@description('Origins of the page, allowed to upload attachments straight to Blob Storage (CORS).')
param attachmentOrigins array = []

@description('Principal id of the managed identity the function app runs as.')
param principalId string

@description('Name of that identity, known before it exists: it seeds the role assignment names (its principal id is known only at deployment).')
param identityName string

// Blob owner covers the host's leases and the deployment package; queues and tables carry the Durable task hub.
var roles = [
  {
    name: 'Storage Blob Data Owner'
    id: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  }
  {
    name: 'Storage Queue Data Contributor'
    id: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  }
  {
    name: 'Storage Table Data Contributor'
    id: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  }
]

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: 'Standard_LRS'
  }
  properties: {
    accessTier: 'Hot'
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    defaultToOAuthAuthentication: true
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: storage
  name: 'default'
  properties: {
    // The page uploads large attachments straight to their blob with a short-lived write-only URL.
    cors: {
      corsRules: empty(attachmentOrigins)
        ? []
        : [
            {
              allowedOrigins: attachmentOrigins
              allowedMethods: ['PUT', 'OPTIONS']
              allowedHeaders: ['content-type', 'x-ms-blob-type', 'x-ms-version', 'x-ms-client-request-id']
              exposedHeaders: ['etag', 'x-ms-request-id']
              maxAgeInSeconds: 3600
            }
          ]
    }
  }
}

resource attachmentsContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobService
  name: attachmentsContainerName
  properties: {
    publicAccess: 'None'
  }
}

resource deploymentContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobService
  name: deploymentContainerName
  properties: {
    publicAccess: 'None'
  }
}

resource roleAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for role in roles: {
  name: guid(storage.id, identityName, role.id)
  scope: storage
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.id)
    principalId: principalId
    principalType: 'ServicePrincipal'
    description: '${role.name}: the Functions host and Durable task hub run with the managed identity.'
  }
}]

output name string = storage.name
output blobEndpoint string = storage.properties.primaryEndpoints.blob
output deploymentContainerName string = deploymentContainer.name
output attachmentsContainerName string = attachmentsContainer.name
