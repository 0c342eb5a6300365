// Cosmos DB for NoSQL (serverless): the database and containers of shared/app/cosmos-containers.ts, read from the generated
// definitions. Keys are off; the managed identity gets the data-plane role Cosmos DB Built-in Data Contributor.
param name string
param location string
param tags object

@description('Principal id of the managed identity the function app runs as.')
param principalId string

@description('Name of that identity, known before it exists: it seeds the role assignment names (its principal id is known only at deployment).')
param identityName string

@minValue(1)
@maxValue(4096)
@description('Length of the vectors in every vector embedding policy; fixed once a container exists.')
param embeddingDimensions int

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
        // Vector policies and indexes (VectorDistance) need it, and the containers with them are created in this
        // same deployment. Full-text search (FullTextContains, FullTextScore) is generally available and needs no
        // capability: its GA documentation has no enablement step (EnableNoSQLFullTextSearch was the preview's).
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

// Partition keys, vector embedding policies and vector indexes cannot change once a container exists; the entries of
// the definitions share one shape ([] where a container has no such policy), so one body serves them all.
// One at a time: Cosmos DB refuses a metadata operation while another runs on the account (412 "exclusive lock" or
// 429), so the database, each container and the role assignment are created one after the other.
@batchSize(1)
resource containers 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2025-10-15' = [for container in definitions.cosmos.containers: {
  parent: database
  name: container.name
  properties: {
    // Optional parts are left out, not sent as null or empty policies.
    resource: union(
      {
        id: container.name
        partitionKey: container.partitionKey
        indexingPolicy: {
          indexingMode: 'consistent'
          automatic: true
          includedPaths: container.includedPaths
          excludedPaths: concat(
            [
              {
                path: '/"_etag"/?'
              }
            ],
            container.excludedPaths
          )
          vectorIndexes: container.vectorIndexes
          fullTextIndexes: container.fullTextIndexes
        }
      },
      container.defaultTtl == null ? {} : {
        defaultTtl: container.defaultTtl
      },
      empty(container.vectorEmbeddings) ? {} : {
        vectorEmbeddingPolicy: {
          vectorEmbeddings: map(container.vectorEmbeddings, embedding => union(embedding, {
            dimensions: embeddingDimensions
          }))
        }
      },
      empty(container.fullTextPaths) ? {} : {
        fullTextPolicy: {
          defaultLanguage: 'en-US'
          fullTextPaths: container.fullTextPaths
        }
      }
    )
    options: {}
  }
}]

resource dataContributor 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2025-10-15' = {
  parent: account
  name: guid(account.id, identityName, dataContributorRoleId)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${dataContributorRoleId}'
    principalId: principalId
    scope: account.id
  }
  // After the last container (and so the database): another metadata operation on the same account.
  dependsOn: [
    containers
  ]
}

output name string = account.name
output endpoint string = account.properties.documentEndpoint
output databaseName string = database.name
