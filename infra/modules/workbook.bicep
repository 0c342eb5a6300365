// The "Chat operations" workbook: turns, time to first token, tokens and cost by model, dead letters and top users by
// cost, queried from the Log Analytics workspace. Its items live in workbook.json, as the portal's editor exports them.
param location string
param tags object
param logAnalyticsWorkspaceId string

@description('Resource id of the Service Bus namespace: the dead-letter tile reads its platform metric.')
param serviceBusNamespaceId string

// A metric that diagnostic settings cannot export (DeadletteredMessages) is read from Azure Monitor metrics on the
// resource itself, so its tile names the namespace: workbook.json holds a placeholder for its id.
var definition = json(replace(loadTextContent('workbook.json'), '__SERVICE_BUS_NAMESPACE_ID__', serviceBusNamespaceId))

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
