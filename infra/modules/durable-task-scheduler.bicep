// The Durable Task Scheduler as the task hub's backend (only when durableTaskBackend is durable-task-scheduler): a
// scheduler, the app's task hub in it, and the app's managed identity granted Durable Task Data Contributor on that hub.
param name string
param location string
param tags object

@description('Task hub name: host.json\'s extensions.durableTask.hubName.')
param taskHubName string

@allowed([
  'Consumption'
  'Dedicated'
])
@description('Consumption bills per action dispatched (up to 500 actions/s); Dedicated bills a fixed monthly price per capacity unit (2,000 actions/s each).')
param skuName string = 'Consumption'

@description('Capacity units of a Dedicated scheduler (1 to 3; 3 makes it zone redundant); unused by Consumption.')
param capacity int = 1

@description('Principal (object) id of the managed identity the function app runs as.')
param principalId string

@description('Name of that identity, known before it exists: it seeds the role assignment names (its principal id is known only at deployment).')
param identityName string

// Built-in role: reads and writes orchestration state and dispatches work items of the task hub.
var durableTaskDataContributor = '0ad04412-c4d5-4796-b79c-f76d14c8d402'

resource scheduler 'Microsoft.DurableTask/schedulers@2026-02-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    // Reached over the public endpoint with Entra ID tokens only (the scheduler has no keys); callers are the
    // function app's instances, whose outbound addresses Flex Consumption does not fix.
    ipAllowlist: [
      '0.0.0.0/0'
    ]
    sku: skuName == 'Dedicated'
      ? {
          name: skuName
          capacity: capacity
        }
      : {
          name: skuName
        }
  }
}

resource taskHub 'Microsoft.DurableTask/schedulers/taskHubs@2026-02-01' = {
  parent: scheduler
  name: taskHubName
  properties: {}
}

resource appAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(taskHub.id, identityName, durableTaskDataContributor)
  scope: taskHub
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', durableTaskDataContributor)
    principalId: principalId
    principalType: 'ServicePrincipal'
    description: 'Durable Task Data Contributor: the Functions host runs the chat turn\'s orchestrations on this task hub.'
  }
}

output endpoint string = scheduler.properties.endpoint
output taskHubName string = taskHub.name
