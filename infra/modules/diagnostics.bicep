// Diagnostic settings: the resource logs and platform metrics of Cosmos DB, Service Bus, Web PubSub and Azure OpenAI
// go to the Log Analytics workspace, so an operator can query what the metric alerts only count.
param logAnalyticsWorkspaceId string
param cosmosAccountName string
param serviceBusNamespaceName string
param webPubSubName string

@description('Name of the Azure OpenAI account the template created; empty when the app uses an existing one.')
param openAiAccountName string = ''

resource cosmosAccount 'Microsoft.DocumentDB/databaseAccounts@2025-10-15' existing = {
  name: cosmosAccountName
}

resource serviceBusNamespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: serviceBusNamespaceName
}

resource webPubSub 'Microsoft.SignalRService/webPubSub@2024-03-01' existing = {
  name: webPubSubName
}

resource openAiAccount 'Microsoft.CognitiveServices/accounts@2024-10-01' existing = {
  // A placeholder when none was created: only conditional resources refer to it, and never with an empty name.
  name: empty(openAiAccountName) ? 'not-deployed' : openAiAccountName
}

// Resource-specific tables (CDBDataPlaneRequests, CDBQueryRuntimeStatistics, ...) instead of AzureDiagnostics: Cosmos
// DB recommends them, they cost less to query and keep one schema per table. Its metrics category is Requests.
resource cosmosDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: 'to-log-analytics'
  scope: cosmosAccount
  properties: {
    workspaceId: logAnalyticsWorkspaceId
    logAnalyticsDestinationType: 'Dedicated'
    logs: [
      {
        categoryGroup: 'allLogs'
        enabled: true
      }
    ]
    metrics: [
      {
        category: 'Requests'
        enabled: true
      }
    ]
  }
}

resource serviceBusDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: 'to-log-analytics'
  scope: serviceBusNamespace
  properties: {
    workspaceId: logAnalyticsWorkspaceId
    logs: [
      {
        categoryGroup: 'allLogs'
        enabled: true
      }
    ]
    metrics: [
      {
        category: 'AllMetrics'
        enabled: true
      }
    ]
  }
}

resource webPubSubDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: 'to-log-analytics'
  scope: webPubSub
  properties: {
    workspaceId: logAnalyticsWorkspaceId
    logs: [
      {
        categoryGroup: 'allLogs'
        enabled: true
      }
    ]
    metrics: [
      {
        category: 'AllMetrics'
        enabled: true
      }
    ]
  }
}

// An existing Azure OpenAI resource belongs to someone else: its diagnostic settings are theirs to choose.
resource openAiDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = if (!empty(openAiAccountName)) {
  name: 'to-log-analytics'
  scope: openAiAccount
  properties: {
    workspaceId: logAnalyticsWorkspaceId
    logs: [
      {
        categoryGroup: 'allLogs'
        enabled: true
      }
    ]
    metrics: [
      {
        category: 'AllMetrics'
        enabled: true
      }
    ]
  }
}
