// Entry point of `azd up`: one resource group holding everything the chat backend needs, every service reached
// by one user-assigned managed identity (no keys). Queue, topic, container, hub and app setting names come from
// generated/definitions.json, which scripts/generate-definitions.ts writes from the code.
targetScope = 'subscription'

@minLength(1)
@maxLength(64)
@description('Name of the azd environment; it seeds the unique suffix of every resource name.')
param environmentName string

@minLength(1)
@description('Region of all resources. Pick one that offers Flex Consumption (az functionapp list-flexconsumption-locations).')
@metadata({
  azd: {
    type: 'location'
  }
})
param location string

@description('Resource group name; empty = rg-<environmentName>.')
param resourceGroupName string = ''

// One switch for what a deployment costs while idle (docs/deploy-cost.md prices both): it sets the default of every
// switch below that is left empty. "trial" idles near zero; "production" keeps an instance warm and every log.
@allowed([
  'trial'
  'production'
])
@description('Deployment profile (azd: DEPLOYMENT_PROFILE): "trial" = Web PubSub Free_F1, no always-ready instance, a daily cap on Log Analytics and no resource logs; "production" = Web PubSub Standard_S1, one always-ready durable instance, every resource log, no cap. Each switch it sets can still be given on its own.')
param deploymentProfile string = 'trial'

@allowed([
  ''
  'Free_F1'
  'Standard_S1'
])
@description('Web PubSub tier (azd: WEBPUBSUB_SKU): Free_F1 (20 concurrent connections, 20,000 messages a day) or Standard_S1; empty = the profile\'s.')
param webPubSubSku string = ''

@allowed([
  512
  2048
  4096
])
@description('Memory of one function app instance, in MB.')
param functionInstanceMemoryMB int = 2048

@minValue(40)
@maxValue(1000)
@description('Most instances the function app scales out to.')
param functionMaximumInstanceCount int = 100

// 100, not the platform's 16 at 2,048 MB: most HTTP invocations are SSE streams that wait on I/O for minutes, and
// 100 matches the Service Bus sessions one instance serves (host.json maxConcurrentSessions). An instance's Node
// event loop and memory carry that many idle streams with room to spare; lower it if handlers become CPU-bound.
@minValue(1)
@maxValue(1000)
@description('HTTP requests (SSE streams included) one function app instance serves at once before another is added.')
param functionHttpPerInstanceConcurrency int = 100

// Flex Consumption's guidance for Durable Functions: keep one instance of the `durable` group (orchestrators,
// activities, entities) always ready, so a turn's orchestration does not wait for a cold start after an idle spell.
// It bills the instance's memory around the clock, and with the Azure Storage backend that instance polls the task
// hub's queues all the while (docs/deploy-cost.md); 0 returns to scale-to-zero. A string, so that an empty azd value
// can mean "the profile's": the function app module holds the number to 0..1000.
@description('Always-ready instances of the durable group (azd: FUNCTION_DURABLE_ALWAYS_READY_INSTANCES), a whole number; 0 = scale to zero; empty = the profile\'s (trial 0, production 1).')
param functionDurableAlwaysReadyInstanceCount string = ''

@description('Endpoint of an existing Azure OpenAI resource to use instead of creating one, e.g. https://<name>.openai.azure.com/. Give the managed identity "Cognitive Services OpenAI User" on it and create deployments named chatDeploymentName and embeddingDeploymentName.')
param existingOpenAiEndpoint string = ''

@description('Region of the Azure OpenAI resource (model availability differs by region); empty = location.')
param openAiLocation string = ''

// One deployment type per deployment: a region may offer a model only as some of them (text-embedding-3-small is not
// GlobalStandard everywhere), and the README lists the regions known to take both defaults.
@allowed([
  'GlobalStandard'
  'DataZoneStandard'
  'Standard'
])
@description('Deployment type of the chat deployment (azd: AZURE_OPENAI_CHAT_DEPLOYMENT_SKU).')
param openAiChatDeploymentSku string = 'GlobalStandard'

@allowed([
  'GlobalStandard'
  'DataZoneStandard'
  'Standard'
])
@description('Deployment type of the embedding deployment (azd: AZURE_OPENAI_EMBEDDING_DEPLOYMENT_SKU); Standard where the region offers the embedding model only as a regional deployment.')
param openAiEmbeddingDeploymentSku string = 'GlobalStandard'

// Chat model: gpt-5.4-mini 2026-03-17, generally available on GlobalStandard, with Chat Completions, streaming and
// tool calling, and not retiring before 2027-09 (gpt-4o-mini takes no new deployments; gpt-4.1-mini and gpt-5-mini
// retire earlier). It is a reasoning model: the app sends max_completion_tokens, never max_tokens or temperature.
// A subscription at the lowest Azure OpenAI quota tier may get no quota for it: pick gpt-5-mini 2025-08-07 then.
@minLength(1)
@description('Chat model, e.g. gpt-5.4-mini (azd: AZURE_OPENAI_CHAT_MODEL). It must support Chat Completions with tools and streaming, and be deployable with openAiChatDeploymentSku in the Azure OpenAI region.')
param chatModelName string = 'gpt-5.4-mini'

@minLength(1)
@description('Version of the chat model (azd: AZURE_OPENAI_CHAT_MODEL_VERSION).')
param chatModelVersion string = '2026-03-17'

@minLength(1)
@description('Name of the chat deployment the app calls (AZURE_OPENAI_CHAT_DEPLOYMENT); default: the model name.')
param chatDeploymentName string = chatModelName

@description('Chat deployment capacity, in thousands of tokens per minute.')
param chatDeploymentCapacity int = 30

// The model catalogue, deployed: each entry becomes a chat deployment named by its id, and the list the app's
// LLM_MODELS (the first entry is the default model). Empty: the one chat model of the parameters above.
@description('The chat models conversations may choose, as LLM_MODELS entries ({id, label?, capabilities?, contextWindow?, price?, allow?}) each with its deployment {model, version, sku? (GlobalStandard, DataZoneStandard or Standard; default GlobalStandard), capacity? (thousands of tokens per minute; default 10)}, e.g. [{"id":"gpt-5.4-mini","label":"Fast","deployment":{"model":"gpt-5.4-mini","version":"2026-03-17","capacity":30}}]. The id names the deployment. Empty: chatModelName alone, as chatDeploymentName.')
param chatModels array = []

// azd passes its environment's values as text: `azd env set CHAT_MODELS '[...]'` gives the same list as JSON.
@description('The chat models as JSON text (azd: CHAT_MODELS), the same entries as chatModels; given, it stands in place of chatModels. Empty: chatModels.')
param chatModelsJson string = ''

@minLength(1)
@description('Embedding model (azd: AZURE_OPENAI_EMBEDDING_MODEL).')
param embeddingModelName string = 'text-embedding-3-small'

@minLength(1)
@description('Version of the embedding model (azd: AZURE_OPENAI_EMBEDDING_MODEL_VERSION).')
param embeddingModelVersion string = '1'

@minLength(1)
@description('Name of the embedding deployment the app calls (AZURE_OPENAI_EMBEDDING_DEPLOYMENT); default: the model name.')
param embeddingDeploymentName string = embeddingModelName

@description('Embedding deployment capacity, in thousands of tokens per minute.')
param embeddingDeploymentCapacity int = 30

// Fixed when the Cosmos DB containers are created: their vector policies cannot change later (a new value needs new
// containers). 1536 is text-embedding-3-small's full length; 4096 is the most a quantizedFlat or diskANN index takes.
@minValue(1)
@maxValue(4096)
@description('Length of the embedding vectors (azd: LLM_EMBEDDING_DIMENSIONS): the Cosmos DB vector policies and the app (LLM_EMBEDDING_DIMENSIONS) use it. The embedding model must produce vectors of this length.')
param embeddingDimensions int = 1536

@description('Retries of an LLM call on 429/5xx.')
param llmMaxRetries int = 3

@description('Timeout of one LLM request, in milliseconds.')
param llmTimeoutMs int = 60000

// Required, with no default: an app without an audience to check tokens against cannot identify anyone, and
// shared/config.ts stops it at start-up. azd asks for it when AUTH_CLIENT_ID is not set (main.parameters.json).
// Bicep has no pattern decorator: the length is checked before deployment, the GUID shape (authClientIdIsGuid below)
// when the deployment starts, before anything is created.
@minLength(36)
@maxLength(36)
@description('Client (application) id, a GUID, of the Microsoft Entra ID app registration that stands for this API: callers present tokens issued for it. Create one with `az ad app create --display-name memory-chat-api --sign-in-audience AzureADMyOrg --query appId -o tsv`, give it the identifier URI api://<appId> with `az ad app update --id <appId> --identifier-uris api://<appId>`, then `azd env set AUTH_CLIENT_ID <appId>`; the postprovision hook adds the web client\'s redirect URI and the delegated scope.')
param authClientId string

// "entra" by default: the web client is served from its own Static Web App origin, where App Service
// authentication's /.auth endpoints (on the function app's origin) cannot sign it in; it sends bearer tokens instead.
@allowed([
  'app-service'
  'entra'
])
@description('Who validates callers\' Entra ID tokens (azd: AUTH_MODE): "entra" = App Service authentication off, the app validates bearer tokens itself, as the web client sends them; "app-service" = App Service authentication (Easy Auth) validates them and hands the app the principal headers, for API callers that sign in through the function app\'s own /.auth.')
param authMode string = 'entra'

@description('Tenant of that app registration; empty = the tenant of this deployment.')
param authTenantId string = ''

@description('Token audiences accepted besides the client id and api://<client id> (no commas in a value).')
param authAllowedAudiences array = []

@description('Browser origins allowed to call the API besides the web client\'s Static Web App (always allowed), e.g. https://chat.example.com.')
param corsAllowedOrigins array = []

// Static Web Apps keeps a site's metadata in a few regions only; the files themselves are served from the edge.
@allowed([
  'westus2'
  'centralus'
  'eastus2'
  'westeurope'
  'eastasia'
])
@description('Region of the web client\'s Static Web App (azd: STATIC_WEB_APP_LOCATION); its files are served worldwide.')
param staticWebAppLocation string = 'westeurope'

// The hot store (working memory, running turns' records, stop requests): Cosmos DB is pay-per-request and needs
// nothing more; Azure Managed Redis answers in about a millisecond but is billed by the hour (the README compares).
@allowed([
  'cosmos'
  'redis'
])
@description('Where the hot store lives (azd: HOT_STORE): "cosmos" (a container with a 24 h TTL, billed per request) or "redis" (an Azure Managed Redis instance, billed per hour, reached with the managed identity).')
param hotStore string = 'cosmos'

@description('Azure Managed Redis SKU when hotStore is redis (azd: REDIS_SKU); Balanced_B0 is the smallest.')
param redisSku string = 'Balanced_B0'

// Personal API keys: off unless the operator turns them on, because a key reaches the OpenAI-compatible API and MCP
// without the sign-in (and so without its conditional access or MFA). On, App Service authentication leaves those
// two routes to the app (excludedPaths), which checks the keys itself.
@allowed([
  'on'
  'off'
])
@description('Whether users may create personal API keys for /api/v1 and /api/mcp (azd: API_KEYS): "off" (default) or "on".')
param apiKeys string = 'off'

@minValue(1)
@maxValue(100)
@description('How many unexpired personal API keys one user may hold (azd: API_KEYS_MAX_PER_USER).')
param apiKeysMaxPerUser int = 10

// The task hub's backend: Azure Storage queues polled by every instance (no fixed price, one storage transaction per
// poll), or the Durable Task Scheduler, which pushes work items to the app (docs/architecture.md compares them).
@allowed([
  ''
  'azure-storage'
  'durable-task-scheduler'
])
@description('Backend of the Durable task hub (azd: DURABLE_TASK_BACKEND): "azure-storage" (queues and tables in the function app\'s storage account, polled) or "durable-task-scheduler" (a Durable Task Scheduler that pushes work to the app); empty = the profile\'s (azure-storage in both). Staging writes host.json\'s storageProvider to match.')
param durableTaskBackend string = ''

@allowed([
  ''
  'Consumption'
  'Dedicated'
])
@description('Durable Task Scheduler SKU when durableTaskBackend is durable-task-scheduler (azd: DURABLE_TASK_SCHEDULER_SKU): "Consumption" (billed per action) or "Dedicated" (a fixed monthly price per capacity unit); empty = the profile\'s (Consumption in both).')
param durableTaskSchedulerSku string = ''

// A cap stops ingestion for the rest of the UTC day once reached (telemetry of that day is lost, the app runs on).
@description('Daily ingestion cap of the Log Analytics workspace in GB (azd: LOG_ANALYTICS_DAILY_CAP_GB), e.g. 0.5; -1 = no cap; empty = the profile\'s (trial 0.5, production none).')
param logAnalyticsDailyCapGb string = ''

// The workbook and the alerts read the app's own telemetry (Application Insights' AppMetrics and AppTraces) and
// platform metrics, which metric alerts and the workbook's metrics tiles read without any diagnostic setting; no
// resource log is read by either. "all" sends every resource log of Cosmos DB, Service Bus, Web PubSub and Azure
// OpenAI to the workspace for an operator to query (a row per Cosmos DB request among them).
@allowed([
  ''
  'none'
  'all'
])
@description('Resource logs and platform metrics sent to Log Analytics by diagnostic settings (azd: RESOURCE_LOGS): "none" (the workbook and alerts read none of them) or "all"; empty = the profile\'s (trial none, production all).')
param resourceLogs string = ''

// Empty by default, so a first `azd up` asks nothing more: no action group and no metric alerts are deployed until an
// address is set. The diagnostic settings (logs and metrics to Log Analytics) are deployed either way.
@description('Email address the metric alerts go to (azd: ALERT_EMAIL); empty = no alerts.')
param alertEmail string = ''

@minValue(1)
@maxValue(100)
@description('Share of an hour\'s chat turns, in percent, that may fail before an alert fires (azd: ALERT_FAILED_TURN_PERCENT).')
param alertFailedTurnPercent int = 10

// Azure budgets have no daily period: this alert sums the app's own priced records of its model calls instead.
@minValue(1)
@description('US dollars of model spend in one UTC day above which an alert fires (azd: DAILY_SPEND_ALERT_USD); the app prices each model call with LLM_PRICES.')
param dailySpendAlertUsd int = 50

@secure()
@description('The key that seals the header values of users\' MCP servers: 32 random bytes in base64 (azd: MCP_SECRETS_KEY, made by the preprovision hook when unset), kept in Key Vault. Empty: users cannot add servers with headers. Changing it makes stored header values unreadable.')
param mcpSecretsKey string = ''

// What each profile chooses for the switches left empty; production is what this template deployed before profiles.
var profiles = {
  trial: {
    webPubSubSku: 'Free_F1'
    durableAlwaysReadyInstanceCount: 0
    durableTaskBackend: 'azure-storage'
    durableTaskSchedulerSku: 'Consumption'
    logAnalyticsDailyCapGb: '0.5'
    resourceLogs: 'none'
  }
  production: {
    webPubSubSku: 'Standard_S1'
    durableAlwaysReadyInstanceCount: 1
    durableTaskBackend: 'azure-storage'
    durableTaskSchedulerSku: 'Consumption'
    logAnalyticsDailyCapGb: '-1'
    resourceLogs: 'all'
  }
}
var profile = profiles[deploymentProfile]
var chosenWebPubSubSku = empty(webPubSubSku) ? profile.webPubSubSku : webPubSubSku
var chosenDurableAlwaysReadyInstanceCount = empty(functionDurableAlwaysReadyInstanceCount)
  ? profile.durableAlwaysReadyInstanceCount
  : int(functionDurableAlwaysReadyInstanceCount)
var chosenDurableTaskBackend = empty(durableTaskBackend) ? profile.durableTaskBackend : durableTaskBackend
var chosenDurableTaskSchedulerSku = empty(durableTaskSchedulerSku)
  ? profile.durableTaskSchedulerSku
  : durableTaskSchedulerSku
var chosenLogAnalyticsDailyCapGb = empty(logAnalyticsDailyCapGb)
  ? profile.logAnalyticsDailyCapGb
  : logAnalyticsDailyCapGb
var chosenResourceLogs = empty(resourceLogs) ? profile.resourceLogs : resourceLogs

// 8-4-4-4-12 hexadecimal digits: a value of another shape stops the deployment with this message (fail()), where
// otherwise the app would start and refuse every token.
var authClientIdIsGuid = map(split(authClientId, '-'), part => length(part)) == [8, 4, 4, 4, 12] && empty(filter(
  map(range(0, length(authClientId)), i => substring(toLower(authClientId), i, 1)),
  char => !contains('0123456789abcdef-', char)
))
var checkedAuthClientId = authClientIdIsGuid
  ? authClientId
  : fail('authClientId (AUTH_CLIENT_ID) must be the GUID of an app registration, e.g. 0b4c1a5e-6f3d-4e2a-9c8b-7d6e5f4a3b2c.')

var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))
// Names are known before anything exists, so modules get them from here rather than from each other's outputs: a
// runtime value in a resource name or condition makes What-If guess instead of predict.
var names = {
  identity: 'id-${resourceToken}'
  logAnalytics: 'log-${resourceToken}'
  applicationInsights: 'appi-${resourceToken}'
  storage: 'st${resourceToken}'
  cosmos: 'cosmos-${resourceToken}'
  serviceBus: 'sb-${resourceToken}'
  webPubSub: 'wps-${resourceToken}'
  openAi: 'oai-${resourceToken}'
  redis: 'redis-${resourceToken}'
  durableTaskScheduler: 'dts-${resourceToken}'
  webApp: 'stapp-${resourceToken}'
  functionApp: 'func-${resourceToken}'
  plan: 'plan-${resourceToken}'
  keyVault: 'kv-${resourceToken}'
}
var tags = {
  'azd-env-name': environmentName
}
var createOpenAi = empty(existingOpenAiEndpoint)
var useRedis = hotStore == 'redis'
var useScheduler = chosenDurableTaskBackend == 'durable-task-scheduler'
// The task hub the host runs is named in host.json; the scheduler's must be the same.
var hostJson = loadJsonContent('../host.json')

resource rg 'Microsoft.Resources/resourceGroups@2024-11-01' = {
  name: !empty(resourceGroupName) ? resourceGroupName : 'rg-${environmentName}'
  location: location
  tags: tags
}

module identity './modules/managed-identity.bicep' = {
  name: 'managed-identity'
  scope: rg
  params: {
    name: names.identity
    location: location
    tags: tags
  }
}

module logAnalytics './modules/log-analytics.bicep' = {
  name: 'log-analytics'
  scope: rg
  params: {
    name: names.logAnalytics
    location: location
    tags: tags
    dailyQuotaGb: chosenLogAnalyticsDailyCapGb
  }
}

module applicationInsights './modules/application-insights.bicep' = {
  name: 'application-insights'
  scope: rg
  params: {
    name: names.applicationInsights
    location: location
    tags: tags
    logAnalyticsWorkspaceId: logAnalytics.outputs.id
    principalId: identity.outputs.principalId
    identityName: names.identity
  }
}

module storage './modules/storage.bicep' = {
  name: 'storage'
  scope: rg
  params: {
    name: names.storage
    location: location
    tags: tags
    deploymentContainerName: 'app-package-${resourceToken}'
    attachmentOrigins: union(corsAllowedOrigins, [webApp.outputs.uri])
    principalId: identity.outputs.principalId
    identityName: names.identity
  }
}

module keyVault './modules/key-vault.bicep' = {
  name: 'key-vault'
  scope: rg
  params: {
    name: names.keyVault
    location: location
    tags: tags
    principalId: identity.outputs.principalId
    identityName: names.identity
    mcpSecretsKey: mcpSecretsKey
    keepMcpSecretsKey: !empty(mcpSecretsKey)
  }
}

module cosmos './modules/cosmos-db.bicep' = {
  name: 'cosmos-db'
  scope: rg
  params: {
    name: names.cosmos
    location: location
    tags: tags
    principalId: identity.outputs.principalId
    identityName: names.identity
    embeddingDimensions: embeddingDimensions
  }
}

module serviceBus './modules/service-bus.bicep' = {
  name: 'service-bus'
  scope: rg
  params: {
    name: names.serviceBus
    location: location
    tags: tags
    principalId: identity.outputs.principalId
    identityName: names.identity
  }
}

module webPubSub './modules/web-pubsub.bicep' = {
  name: 'web-pubsub'
  scope: rg
  params: {
    name: names.webPubSub
    location: location
    tags: tags
    skuName: chosenWebPubSubSku
    principalId: identity.outputs.principalId
    identityName: names.identity
  }
}

// The catalogue from either parameter: the JSON text azd passes, else the list a parameters file gives.
var chatCatalogue = empty(chatModelsJson)
  ? chatModels
  : startsWith(trim(chatModelsJson), '[')
      ? json(chatModelsJson)
      : fail('chatModelsJson (CHAT_MODELS) must be a JSON list of chat models, e.g. [{"id":"gpt-5.4-mini","deployment":{"model":"gpt-5.4-mini","version":"2026-03-17"}}].')

// The sku and capacity an entry leaves out take the catalogue's own defaults (shared/models/model-catalogue.ts).
var chatDeployments = empty(chatCatalogue)
  ? [
      {
        name: chatDeploymentName
        model: chatModelName
        version: chatModelVersion
        sku: openAiChatDeploymentSku
        capacity: chatDeploymentCapacity
      }
    ]
  : map(chatCatalogue, entry => {
      name: entry.id
      model: entry.deployment.model
      version: entry.deployment.version
      sku: entry.deployment.?sku ?? 'GlobalStandard'
      capacity: entry.deployment.?capacity ?? 10
    })
var defaultChatDeployment = chatDeployments[0].name

module openAi './modules/openai.bicep' = if (createOpenAi) {
  name: 'openai'
  scope: rg
  params: {
    name: names.openAi
    location: !empty(openAiLocation) ? openAiLocation : location
    tags: tags
    embeddingDeploymentSkuName: openAiEmbeddingDeploymentSku
    chatDeployments: chatDeployments
    embeddingDeploymentName: embeddingDeploymentName
    embeddingModelName: embeddingModelName
    embeddingModelVersion: embeddingModelVersion
    embeddingDeploymentCapacity: embeddingDeploymentCapacity
    principalId: identity.outputs.principalId
    identityName: names.identity
  }
}

module redis './modules/managed-redis.bicep' = if (useRedis) {
  name: 'managed-redis'
  scope: rg
  params: {
    name: names.redis
    location: location
    tags: tags
    skuName: redisSku
    principalId: identity.outputs.principalId
    identityName: names.identity
  }
}

module durableTaskScheduler './modules/durable-task-scheduler.bicep' = if (useScheduler) {
  name: 'durable-task-scheduler'
  scope: rg
  params: {
    name: names.durableTaskScheduler
    location: location
    tags: tags
    taskHubName: hostJson.extensions.durableTask.hubName
    skuName: chosenDurableTaskSchedulerSku
    principalId: identity.outputs.principalId
    identityName: names.identity
  }
}

// The module exists only when createOpenAi; `!` states it (without it Bicep warns that the output may be null).
var openAiEndpoint = createOpenAi ? openAi!.outputs.endpoint : existingOpenAiEndpoint

// The web client: a Free Static Web App, whose origin the function app's CORS admits.
module webApp './modules/static-web-app.bicep' = {
  name: 'static-web-app'
  scope: rg
  params: {
    name: names.webApp
    location: staticWebAppLocation
    tags: tags
  }
}

module functionApp './modules/function-app.bicep' = {
  name: 'function-app'
  scope: rg
  params: {
    name: names.functionApp
    planName: names.plan
    location: location
    tags: tags
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageAccountName: names.storage
    deploymentContainerName: storage.outputs.deploymentContainerName
    attachmentsBlobEndpoint: storage.outputs.blobEndpoint
    attachmentsContainerName: storage.outputs.attachmentsContainerName
    applicationInsightsName: names.applicationInsights
    cosmosEndpoint: cosmos.outputs.endpoint
    serviceBusFullyQualifiedNamespace: serviceBus.outputs.fullyQualifiedNamespace
    webPubSubEndpoint: webPubSub.outputs.endpoint
    hotStore: hotStore
    redisHostName: useRedis ? redis!.outputs.hostName : ''
    durableTaskSchedulerEndpoint: useScheduler ? durableTaskScheduler!.outputs.endpoint : ''
    azureOpenAiEndpoint: openAiEndpoint
    chatDeploymentName: defaultChatDeployment
    llmModels: empty(chatCatalogue) ? '' : string(chatCatalogue)
    embeddingDeploymentName: embeddingDeploymentName
    embeddingDimensions: embeddingDimensions
    llmMaxRetries: llmMaxRetries
    llmTimeoutMs: llmTimeoutMs
    instanceMemoryMB: functionInstanceMemoryMB
    maximumInstanceCount: functionMaximumInstanceCount
    httpPerInstanceConcurrency: functionHttpPerInstanceConcurrency
    durableAlwaysReadyInstanceCount: chosenDurableAlwaysReadyInstanceCount
    corsAllowedOrigins: union(corsAllowedOrigins, [webApp.outputs.uri])
    authClientId: checkedAuthClientId
    authMode: authMode
    authTenantId: !empty(authTenantId) ? authTenantId : tenant().tenantId
    authAllowedAudiences: authAllowedAudiences
    mcpSealingReference: keyVault.outputs.mcpSealingReference
    apiKeys: apiKeys
    apiKeysMaxPerUser: apiKeysMaxPerUser
  }
  // Named above rather than read from its outputs (see `names`), so the order is stated.
  dependsOn: [
    applicationInsights
  ]
}

module diagnostics './modules/diagnostics.bicep' = if (chosenResourceLogs == 'all') {
  name: 'diagnostics'
  scope: rg
  params: {
    logAnalyticsWorkspaceId: logAnalytics.outputs.id
    cosmosAccountName: names.cosmos
    serviceBusNamespaceName: names.serviceBus
    webPubSubName: names.webPubSub
    openAiAccountName: createOpenAi ? names.openAi : ''
  }
  dependsOn: [
    cosmos
    serviceBus
    webPubSub
    openAi
  ]
}

// Costs nothing to keep: a workbook is a saved set of queries over the workspace.
module workbook './modules/workbook.bicep' = {
  name: 'workbook'
  scope: rg
  params: {
    location: location
    tags: tags
    logAnalyticsWorkspaceId: logAnalytics.outputs.id
    serviceBusNamespaceId: serviceBus.outputs.id
  }
}

module alerts './modules/alerts.bicep' = if (!empty(alertEmail)) {
  name: 'alerts'
  scope: rg
  params: {
    location: location
    tags: tags
    alertEmail: alertEmail
    cosmosAccountName: names.cosmos
    serviceBusNamespaceName: names.serviceBus
    webPubSubName: names.webPubSub
    webPubSubConnectionLimit: webPubSub.outputs.connectionLimit
    applicationInsightsName: names.applicationInsights
    logAnalyticsWorkspaceName: names.logAnalytics
    openAiAccountName: createOpenAi ? names.openAi : ''
    failedTurnPercentThreshold: alertFailedTurnPercent
    dailySpendAlertUsd: dailySpendAlertUsd
  }
  dependsOn: [
    cosmos
    serviceBus
    applicationInsights
    logAnalytics
    openAi
  ]
}

// azd stores these in the environment (.azure/<env>/.env). Names and endpoints only: nothing here grants access.
output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_RESOURCE_GROUP string = rg.name
output AZURE_MANAGED_IDENTITY_CLIENT_ID string = identity.outputs.clientId
output AZURE_FUNCTION_APP_NAME string = functionApp.outputs.name
output SERVICE_API_URI string = functionApp.outputs.uri
output SERVICE_WEB_URI string = webApp.outputs.uri
output APP_SERVICE_AUTHENTICATION_ENABLED bool = functionApp.outputs.authenticationEnabled
// Read by the postprovision sign-in hook, which gives the app registration the web client's redirect URI and the
// delegated scope it asks for. A client id identifies the registration; it grants nothing.
output AUTH_CLIENT_ID string = checkedAuthClientId
output AUTH_MODE string = authMode
output DEPLOYMENT_PROFILE string = deploymentProfile
output APPLICATIONINSIGHTS_NAME string = applicationInsights.outputs.name
output COSMOS_ENDPOINT string = cosmos.outputs.endpoint
output COSMOS_DATABASE string = cosmos.outputs.databaseName
output SERVICE_BUS_FULLY_QUALIFIED_NAMESPACE string = serviceBus.outputs.fullyQualifiedNamespace
output WEBPUBSUB_ENDPOINT string = webPubSub.outputs.endpoint
output WEBPUBSUB_HUB string = webPubSub.outputs.hub
// The page uploads large attachments straight to it: its CSP names it.
output ATTACHMENTS_BLOB_ENDPOINT string = storage.outputs.blobEndpoint
output REDIS_HOST_NAME string = useRedis ? redis!.outputs.hostName : ''
// Read by scripts/stage-function-app.ts (azd hands a hook its environment) to write host.json's storageProvider.
output DURABLE_TASK_BACKEND string = chosenDurableTaskBackend
output AZURE_OPENAI_ENDPOINT string = openAiEndpoint
output AZURE_OPENAI_CHAT_DEPLOYMENT string = defaultChatDeployment
output AZURE_OPENAI_EMBEDDING_DEPLOYMENT string = embeddingDeploymentName
output OPERATIONS_WORKBOOK_ID string = workbook.outputs.id
