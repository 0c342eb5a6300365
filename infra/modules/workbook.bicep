// The "Chat operations" workbook: turns, time to first token, tokens and cost by model, dead letters and top users by
// cost, queried from the Log Analytics workspace. Its items live in workbook.json, as the portal's editor exports them.
param location string
param tags object
param logAnalyticsWorkspaceId string

var definition = loadJsonContent('workbook.json')

resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  // A workbook's name is a GUID; this one stays the same across deployments, so a redeploy updates it in place.
  name: guid(resourceGroup().id, 'chat-operations-workbook')
  location: location
  tags: tags
  kind: 'shared'
  properties: {
    displayName: 'Chat operations'
    category: 'workbook'
    sourceId: logAnalyticsWorkspaceId
    version: 'Notebook/1.0'
    // The queries run against the workspace the workbook is opened from, or this one when opened from the gallery.
    serializedData: string(union(definition, {
      fallbackResourceIds: [
        logAnalyticsWorkspaceId
      ]
    }))
  }
}

output id string = workbook.id
