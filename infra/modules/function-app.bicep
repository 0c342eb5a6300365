// The function app on Flex Consumption (Node 22), running as the user-assigned identity with identity-based
// connections only. Its app settings are exactly the names in the generated definitions (the drift test checks),
// and callers are identified either by App Service authentication (Microsoft Entra ID) or by the app itself.
param name string
param planName string
param location string
param tags object

@description('Resource id of the user-assigned managed identity.')
param identityId string

@description('Client id of that identity: AZURE_CLIENT_ID and the `__clientId` connection settings.')
param identityClientId string

param storageAccountName string
param deploymentContainerName string

@description('Blob endpoint and container of the files attached to messages.')
param attachmentsBlobEndpoint string
param attachmentsContainerName string
param applicationInsightsName string
param cosmosEndpoint string
param serviceBusFullyQualifiedNamespace string
param webPubSubEndpoint string

@allowed([
  'cosmos'
  'redis'
])
@description('Where the hot store lives: HOT_STORE.')
param hotStore string = 'cosmos'

@description('Azure Managed Redis host name when hotStore is redis (REDIS_HOST_NAME); empty otherwise.')
param redisHostName string = ''

@description('Endpoint of the Durable Task Scheduler when it is the task hub\'s backend; empty = Azure Storage.')
param durableTaskSchedulerEndpoint string = ''
param azureOpenAiEndpoint string
param chatDeploymentName string
@description('The model catalogue as JSON (LLM_MODELS); empty: the one chat model chatDeploymentName.')
param llmModels string = ''
param embeddingDeploymentName string

@description('Length of the embedding vectors, as the Cosmos DB vector policies were created with it.')
param embeddingDimensions int
param llmMaxRetries int
param llmTimeoutMs int

@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048

@minValue(40)
@maxValue(1000)
param maximumInstanceCount int = 100

@minValue(1)
@maxValue(1000)
@description('HTTP requests one instance serves at once before Flex Consumption adds an instance.')
param httpPerInstanceConcurrency int = 100

@minValue(0)
@maxValue(1000)
@description('Always-ready instances of the durable group; 0 = none.')
param durableAlwaysReadyInstanceCount int = 1

param corsAllowedOrigins array = []

@minLength(36)
@maxLength(36)
@description('Client id of the Entra ID app registration callers get tokens for.')
param authClientId string

@allowed([
  'app-service'
  'entra'
])
@description('"app-service": App Service authentication validates tokens; "entra": the app validates them itself.')
param authMode string

param authTenantId string = tenant().tenantId
param authAllowedAudiences array = []

@description('MCP_SECRETS_KEY as a Key Vault reference (resolved with the managed identity); empty when none is kept.')
param mcpSealingReference string = ''

@allowed([
  'on'
  'off'
])
@description('Personal API keys (API_KEYS): "on" also leaves the routes that take them to the app (excludedPaths).')
param apiKeys string = 'off'

@minValue(1)
@maxValue(100)
@description('How many unexpired personal API keys one user may hold (API_KEYS_MAX_PER_USER).')
param apiKeysMaxPerUser int = 10

var definitions = loadJsonContent('../generated/definitions.json')
var appServiceAuthentication = authMode == 'app-service'
// Never empty, whatever the parameters: shared/config.ts refuses AUTH_MODE=entra without an audience.
var audiences = union(
  [
    authClientId
    'api://${authClientId}'
  ],
  authAllowedAudiences
)

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: {
    reserved: true
  }
}

resource functionApp 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: location
  // azd finds the app to deploy the `api` service to by this tag.
  tags: union(tags, {
    'azd-service-name': 'api'
  })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    // Key Vault references (MCP_SECRETS_KEY) resolve as the user-assigned identity, not a system one.
    keyVaultReferenceIdentity: identityId
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storage.properties.primaryEndpoints.blob}${deploymentContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        // `durable` is the per-function scale group of every Durable Functions trigger (orchestration, activity,
        // entity); `http` and `function:<name>` are the other names Flex Consumption accepts here.
        alwaysReady: durableAlwaysReadyInstanceCount > 0
          ? [
              {
                name: 'durable'
                instanceCount: durableAlwaysReadyInstanceCount
              }
            ]
          : []
        instanceMemoryMB: instanceMemoryMB
        maximumInstanceCount: maximumInstanceCount
        triggers: {
          http: {
            // The platform default follows instance memory (16 at 2,048 MB) and suits CPU-bound handlers. Here an
            // open SSE stream holds its invocation for its whole life (up to SSE_IDLE_TIMEOUT_MS, 120 s, and longer
            // while a turn streams) while the Node worker only waits on I/O; at 16 a few hundred readers would
            // scale out to dozens of idle instances, each billed for its memory.
            perInstanceConcurrency: httpPerInstanceConcurrency
          }
        }
      }
      // Flex Consumption takes the language from here; FUNCTIONS_WORKER_RUNTIME is not an app setting on this plan.
      runtime: {
        name: 'node'
        version: '22'
      }
    }
    siteConfig: {
      minTlsVersion: '1.2'
      cors: {
        allowedOrigins: corsAllowedOrigins
      }
      appSettings: [
        {
          name: 'AzureWebJobsStorage__accountName'
          value: storage.name
        }
        {
          name: 'AzureWebJobsStorage__credential'
          value: 'managedidentity'
        }
        {
          name: 'AzureWebJobsStorage__clientId'
          value: identityClientId
        }
        {
          // host.json's storageProvider names it when the scheduler is the backend (staging writes that); unused otherwise.
          name: 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'
          value: empty(durableTaskSchedulerEndpoint)
            ? ''
            : 'Endpoint=${durableTaskSchedulerEndpoint};Authentication=ManagedIdentity;ClientID=${identityClientId}'
        }
        {
          name: 'ServiceBusConnection__fullyQualifiedNamespace'
          value: serviceBusFullyQualifiedNamespace
        }
        {
          name: 'ServiceBusConnection__credential'
          value: 'managedidentity'
        }
        {
          name: 'ServiceBusConnection__clientId'
          value: identityClientId
        }
        {
          name: 'APP_ENV'
          value: 'azure'
        }
        {
          name: 'AZURE_CLIENT_ID'
          value: identityClientId
        }
        {
          name: 'COSMOS_ENDPOINT'
          value: cosmosEndpoint
        }
        {
          name: 'COSMOS_DATABASE'
          value: definitions.cosmos.databaseName
        }
        {
          name: 'WEBPUBSUB_ENDPOINT'
          value: webPubSubEndpoint
        }
        {
          name: 'WEBPUBSUB_HUB'
          value: definitions.webPubSub.hub
        }
        {
          name: 'ATTACHMENTS_BLOB_ENDPOINT'
          value: attachmentsBlobEndpoint
        }
        {
          name: 'ATTACHMENTS_CONTAINER'
          value: attachmentsContainerName
        }
        {
          name: 'HOT_STORE'
          value: hotStore
        }
        {
          name: 'API_KEYS'
          value: apiKeys
        }
        {
          name: 'API_KEYS_MAX_PER_USER'
          value: string(apiKeysMaxPerUser)
        }
        {
          name: 'REDIS_HOST_NAME'
          value: redisHostName
        }
        {
          name: 'LLM_PROVIDER'
          value: 'azure-openai'
        }
        {
          name: 'AZURE_OPENAI_ENDPOINT'
          value: azureOpenAiEndpoint
        }
        {
          name: 'AZURE_OPENAI_CHAT_DEPLOYMENT'
          value: chatDeploymentName
        }
        {
          name: 'LLM_MODELS'
          value: llmModels
        }
        {
          name: 'AZURE_OPENAI_EMBEDDING_DEPLOYMENT'
          value: embeddingDeploymentName
        }
        {
          name: 'LLM_EMBEDDING_DIMENSIONS'
          value: string(embeddingDimensions)
        }
        {
          name: 'LLM_MAX_RETRIES'
          value: string(llmMaxRetries)
        }
        {
          name: 'LLM_TIMEOUT_MS'
          value: string(llmTimeoutMs)
        }
        {
          // "app-service" trusts the principal headers, which only App Service authentication (authSettings below,
          // on exactly then) can vouch for; "entra" validates bearer tokens against the same tenant and audiences.
          name: 'AUTH_MODE'
          value: authMode
        }
        {
          name: 'AUTH_ENTRA_TENANT_ID'
          value: authTenantId
        }
        {
          name: 'AUTH_ENTRA_AUDIENCE'
          value: join(audiences, ',')
        }
        {
          // Read by the host (telemetryMode OpenTelemetry in host.json) and by the app's own OpenTelemetry, which
          // exports its turn traces and GenAI metrics here with the managed identity (AZURE_CLIENT_ID).
          name: 'APPLICATIONINSIGHTS_CONNECTION_STRING'
          value: appInsights.properties.ConnectionString
        }
        {
          name: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING'
          value: 'ClientId=${identityClientId};Authorization=AAD'
        }
        {
          // Seals users' MCP header values; the value lives in Key Vault, never in the app's configuration.
          name: 'MCP_SECRETS_KEY'
          value: mcpSealingReference
        }
        {
          // The app's spans carry the function app's name, as the host's do: one role in the application map.
          name: 'OTEL_SERVICE_NAME'
          value: name
        }
      ]
    }
  }
}

// Easy Auth validates Entra ID tokens and passes the principal headers on, but lets anonymous requests through:
// the app answers those itself with a 401 problem+json, and keeps its health probe public. Declared in both modes,
// so that switching authMode to "entra" also turns App Service authentication off. With API keys on, the routes that
// take them are left to the app: Easy Auth would refuse a key as a malformed token, and the app trusts no principal
// headers there (shared/identity/identity-resolver.ts).
resource authSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: functionApp
  name: 'authsettingsV2'
  properties: {
    platform: {
      enabled: appServiceAuthentication
    }
    globalValidation: {
      requireAuthentication: false
      unauthenticatedClientAction: 'AllowAnonymous'
      // Every route that takes a key: functions/api-keys.ts lists them (API_KEY_PATHS), and a test compares.
      excludedPaths: apiKeys == 'on'
        ? [
            '/api/v1/*'
            '/api/mcp'
          ]
        : []
    }
    httpSettings: {
      requireHttps: true
    }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: {
          clientId: authClientId
          openIdIssuer: '${environment().authentication.loginEndpoint}${authTenantId}/v2.0'
        }
        validation: {
          allowedAudiences: audiences
        }
      }
    }
    login: {
      tokenStore: {
        enabled: false
      }
    }
  }
}

output name string = functionApp.name
output uri string = 'https://${functionApp.properties.defaultHostName}'
output authenticationEnabled bool = appServiceAuthentication
