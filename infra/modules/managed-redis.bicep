// Azure Managed Redis as the hot store (only when hotStore is redis): TLS only, access keys off, and the app's
// managed identity given the database's `default` access policy, so it signs in with Entra ID tokens.
param name string
param location string
param tags object

@description('Azure Managed Redis SKU; Balanced_B0 is the smallest.')
param skuName string = 'Balanced_B0'

@description('Principal (object) id of the managed identity the function app runs as.')
param principalId string

@description('Name of that identity, known before it exists: it seeds the role assignment names (its principal id is known only at deployment).')
param identityName string

resource cluster 'Microsoft.Cache/redisEnterprise@2025-07-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: skuName
  }
  properties: {
    minimumTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
    // The hot store rebuilds what it loses from long-term history, so one node is enough for a first deployment.
    highAvailability: 'Disabled'
  }
}

resource database 'Microsoft.Cache/redisEnterprise/databases@2025-07-01' = {
  parent: cluster
  name: 'default'
  properties: {
    clientProtocol: 'Encrypted'
    port: 10000
    // One endpoint that routes each command itself: a plain (non-cluster) client works, and a session's hash is one
    // key, so its Lua compare-and-set never spans slots.
    clusteringPolicy: 'EnterpriseCluster'
    // Every key carries a TTL; under memory pressure the least recently used sessions go first and are rebuilt.
    evictionPolicy: 'VolatileLRU'
    accessKeysAuthentication: 'Disabled'
  }
}

resource appAccess 'Microsoft.Cache/redisEnterprise/databases/accessPolicyAssignments@2025-07-01' = {
  parent: database
  // Access policy assignment names are letters and digits only.
  name: replace(guid(database.id, identityName, 'default'), '-', '')
  properties: {
    accessPolicyName: 'default'
    user: {
      objectId: principalId
    }
  }
}

output hostName string = cluster.properties.hostName
