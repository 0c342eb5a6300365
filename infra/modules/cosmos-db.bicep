// Cosmos DB for NoSQL (serverless): the database and containers of shared/cosmos/schema.ts, read from the generated
// definitions. Keys are off; the managed identity gets the data-plane role Cosmos DB Built-in Data Contributor.
param name string
param location string
param tags object

@description('Principal id of the managed identity the function app runs as.')
param principalId string

var definitions = loadJsonContent('../generated/definitions.json')

// Built-in data-plane role (sqlRoleDefinitions), not an Azure RBAC role: it reads and writes items but cannot create
// containers, so containers exist only because they are declared here.
var dataContributorRoleId = '00000000-0000-0000-0000-000000000002'

resource account 'Microsoft.DocumentDB/databaseAccounts@2025-10-15' = {
  name: name
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    consistencyPolicy: {
      defaultConsistencyLevel: 'Session'
    }
    locations: [
      {
        locationName: location
        failoverPriority: 0
        isZoneRedundant: false
      }
    ]
    capabilities: [
      {
        name: 'EnableServerless'
      }
      {
        // Conversation search (VectorDistance) arrives with later issues; enabling it later races container creation.
        name: 'EnableNoSQLVectorSearch'
      }
    ]
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: 'Enabled'
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2025-10-15' = {
  parent: account
  name: definitions.cosmos.databaseName
  properties: {
    resource: {
      id: definitions.cosmos.databaseName
    }
    options: {}
  }
}

resource containers 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2025-10-15' = [for container in definitions.cosmos.containers: {
  parent: database
  name: container.name
  properties: {
    // defaultTtl is left out, not sent as null, when the container has no time to live.
    resource: union({
      id: container.name
      partitionKey: {
        paths: [
          container.partitionKeyPath
        ]
        kind: 'Hash'
        version: 2
      }
    }, container.defaultTtl == null ? {} : {
      defaultTtl: container.defaultTtl
    })
    options: {}
  }
}]

resource dataContributor 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2025-10-15' = {
  parent: account
  name: guid(account.id, principalId, dataContributorRoleId)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${dataContributorRoleId}'
    principalId: principalId
    scope: account.id
  }
}

output name string = account.name
output endpoint string = account.properties.documentEndpoint
output databaseName string = database.name
