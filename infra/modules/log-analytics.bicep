// Log Analytics workspace behind Application Insights; the portal's logs, alerts and workbooks query it.
param name string
param location string
param tags object

@description('Days of logs kept.')
param retentionInDays int = 30

@description('Daily ingestion cap in GB, as text so it may have decimals (e.g. 0.5); -1 = no cap. Past it, ingestion stops until the next UTC day.')
param dailyQuotaGb string = '-1'

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
    workspaceCapping: {
      // The API takes a decimal number of GB, which a Bicep literal cannot write.
      dailyQuotaGb: json(dailyQuotaGb)
    }
    features: {
      // No ingestion with workspace keys; telemetry arrives through Application Insights with Entra ID.
      disableLocalAuth: true
    }
  }
}

output id string = workspace.id
output name string = workspace.name
