// Application Insights for the function app. Local auth is off, so the host signs telemetry in with the managed
// identity (APPLICATIONINSIGHTS_AUTHENTICATION_STRING) and needs Monitoring Metrics Publisher.
param name string
param location string
param tags object
param logAnalyticsWorkspaceId string

@description('Principal id of the managed identity that sends telemetry.')
param principalId string

@description('Name of that identity, known before it exists: it seeds the role assignment names (its principal id is known only at deployment).')
param identityName string

var monitoringMetricsPublisherRoleId = '3913510d-42f4-4e42-8a64-420c390055eb'

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: name
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: logAnalyticsWorkspaceId
    DisableLocalAuth: true
  }
}

resource metricsPublisher 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(appInsights.id, identityName, monitoringMetricsPublisherRoleId)
  scope: appInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', monitoringMetricsPublisherRoleId)
    principalId: principalId
    principalType: 'ServicePrincipal'
    description: 'Monitoring Metrics Publisher: the function app sends telemetry with its managed identity.'
  }
}

// The function app module reads the ingestion settings through an `existing` reference, so none leave as output.
output id string = appInsights.id
output name string = appInsights.name
