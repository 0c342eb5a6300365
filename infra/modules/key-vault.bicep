// The Key Vault that holds the app's own secrets: the key that seals the header values of users' MCP servers. The
// function app reads it through a Key Vault reference, as its managed identity (Key Vault Secrets User, RBAC only).
param name string
param location string
param tags object

@description('Principal id of the managed identity that reads the secrets.')
param principalId string
param identityName string

@secure()
@description('The MCP secrets key (32 random bytes in base64).')
param mcpSecretsKey string

@description('Whether a key is given (the secure value itself is not read for the output).')
param keepMcpSecretsKey bool

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: tenant().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 7
    enablePurgeProtection: true
    publicNetworkAccess: 'Enabled'
  }
}

resource mcpKey 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (keepMcpSecretsKey) {
  parent: vault
  name: 'mcp-secrets-key'
  properties: {
    value: mcpSecretsKey
    contentType: 'AES-256-GCM key, base64'
  }
}

// Key Vault Secrets User: read secret values, nothing else.
var secretsUserRole = '4633458b-17de-408a-b874-0445c86b69e6'

resource secretsUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, identityName, secretsUserRole)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', secretsUserRole)
    principalId: principalId
    principalType: 'ServicePrincipal'
    description: 'Key Vault Secrets User: the function app resolves its Key Vault references with the managed identity.'
  }
}

output name string = vault.name
@description('The MCP secrets key as a Key Vault reference for an app setting; empty when none is stored.')
output mcpSealingReference string = !keepMcpSecretsKey
  ? ''
  : '@Microsoft.KeyVault(SecretUri=${vault.properties.vaultUri}secrets/mcp-secrets-key)'
