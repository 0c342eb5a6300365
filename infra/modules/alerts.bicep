// Alerts mailed to one action group: metric alerts on the platform metrics of the services the chat backend runs on,
// and log alerts on what the app itself records (failed turns, the day's model spend). Deployed only with an email.
param location string
param tags object

@description('Email address the alerts are sent to.')
param alertEmail string

param cosmosAccountName string
param serviceBusNamespaceName string
param webPubSubName string

@description('Connections one Web PubSub unit of the deployed SKU accepts (Free_F1: 20, Standard_S1: 1,000).')
param webPubSubConnectionLimit int

param applicationInsightsName string

@description('Name of the Log Analytics workspace behind Application Insights: the log alerts query its tables.')
param logAnalyticsWorkspaceName string

@description('Name of the Azure OpenAI account the template created; empty when the app uses an existing one.')
param openAiAccountName string = ''

@minValue(1)
@maxValue(100)
@description('Share of the Web PubSub connection limit, in percent, above which Web PubSub alerts.')
param webPubSubConnectionPercentThreshold int = 80

@minValue(1000)
@description('Average time to the first response token of Azure OpenAI, in milliseconds, above which it alerts.')
param openAiTimeToResponseThresholdMs int = 10000

@minValue(1)
@maxValue(100)
@description('Share of the turns of an hour, in percent, that may fail before an alert fires.')
param failedTurnPercentThreshold int = 10

@minValue(1)
@description('US dollars of model spend in one UTC day (as the app prices its own model calls) above which an alert fires.')
param dailySpendAlertUsd int = 50

resource cosmosAccount 'Microsoft.DocumentDB/databaseAccounts@2025-10-15' existing = {
  name: cosmosAccountName
}

resource serviceBusNamespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: serviceBusNamespaceName
}

resource webPubSub 'Microsoft.SignalRService/webPubSub@2024-03-01' existing = {
  name: webPubSubName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource logAnalytics 'Microsoft.OperationalInsights/workspaces@2023-09-01' existing = {
  name: logAnalyticsWorkspaceName
}

resource openAiAccount 'Microsoft.CognitiveServices/accounts@2024-10-01' existing = {
  // A placeholder when none was created: only conditional resources refer to it, and never with an empty name.
  name: empty(openAiAccountName) ? 'not-deployed' : openAiAccountName
}

// Action groups are global resources: 'Global' is their only location.
resource actionGroup 'Microsoft.Insights/actionGroups@2023-01-01' = {
  name: 'ag-chat-operators'
  location: 'Global'
  tags: tags
  properties: {
    groupShortName: 'chat-ops'
    enabled: true
    emailReceivers: [
      {
        name: 'operators'
        emailAddress: alertEmail
        useCommonAlertSchema: true
      }
    ]
  }
}

var actions = [
  {
    actionGroupId: actionGroup.id
  }
]

// A message lands in a dead-letter queue only after every delivery attempt failed or its time to live ran out, so
// one is already a lost turn or a lost background job. Split by queue, the mail names the queue to look at.
resource deadLetters 'Microsoft.Insights/metricAlerts@2026-01-01' = {
  name: 'Service Bus dead-lettered messages'
  location: 'global'
  tags: tags
  properties: {
    description: 'A Service Bus queue or subscription holds dead-lettered messages: messages the app could not process after every retry (or that expired). Read them in the portal (Service Bus Explorer, dead-letter tab) to see the reason, fix the cause, then resubmit or purge them.'
    severity: 2
    enabled: true
    scopes: [
      serviceBusNamespace.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'DeadletteredMessages'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'DeadletteredMessages'
          dimensions: [
            {
              name: 'EntityName'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Maximum'
        }
      ]
    }
    autoMitigate: true
    actions: actions
  }
}

// Failed requests as Application Insights counts them: function invocations that failed, HTTP or triggered (Service
// Bus, Durable). A few a quarter-hour are retried transients; more means a function is broken or a service is down.
resource functionFailures 'Microsoft.Insights/metricAlerts@2026-01-01' = {
  name: 'Function app failed invocations'
  location: 'global'
  tags: tags
  properties: {
    description: 'The function app recorded more than 5 failed invocations in 15 minutes (functions that threw or answered with a server error). Open Application Insights > Failures to see which function fails and the exception it throws.'
    severity: 1
    enabled: true
    scopes: [
      applicationInsights.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'FailedRequests'
          metricNamespace: 'microsoft.insights/components'
          metricName: 'requests/failed'
          operator: 'GreaterThan'
          threshold: 5
          timeAggregation: 'Count'
        }
      ]
    }
    autoMitigate: true
    actions: actions
  }
}

// The SDK retries a 429 after the delay Cosmos DB asks for, so a few are harmless; a steady stream means requests
// wait or fail. The account is serverless: the remedy is fewer or cheaper requests, not more provisioned RU/s. This is
// its one throughput alert: normalized RU consumption, a share of provisioned throughput, means nothing serverless.
resource cosmosThrottled 'Microsoft.Insights/metricAlerts@2026-01-01' = {
  name: 'Cosmos DB throttled requests 429'
  location: 'global'
  tags: tags
  properties: {
    description: 'Cosmos DB answered more than 10 requests with 429 (request rate too large) in 15 minutes. The app retries them, but turns slow down or fail. Check Cosmos DB Insights > Throughput for the container, the operation and the partition key that take the request units.'
    severity: 2
    enabled: true
    scopes: [
      cosmosAccount.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'Throttled'
          metricNamespace: 'Microsoft.DocumentDB/databaseAccounts'
          metricName: 'TotalRequests'
          dimensions: [
            {
              name: 'StatusCode'
              operator: 'Include'
              values: [
                '429'
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 10
          timeAggregation: 'Count'
        }
      ]
    }
    autoMitigate: true
    actions: actions
  }
}

// Free_F1 refuses connections past 20, Standard_S1 past 1,000 per unit: warn before clients are turned away.
resource webPubSubConnections 'Microsoft.Insights/metricAlerts@2026-01-01' = {
  name: 'Web PubSub connections near the limit'
  location: 'global'
  tags: tags
  properties: {
    description: 'Web PubSub holds more than ${webPubSubConnectionPercentThreshold}% of the ${webPubSubConnectionLimit} concurrent connections its SKU and units allow. Past the limit new clients cannot subscribe to their turn events. Add units (or move from Free_F1 to Standard_S1).'
    severity: 2
    enabled: true
    scopes: [
      webPubSub.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'Connections'
          metricNamespace: 'Microsoft.SignalRService/WebPubSub'
          metricName: 'TotalConnectionCount'
          operator: 'GreaterThan'
          threshold: webPubSubConnectionLimit * webPubSubConnectionPercentThreshold / 100
          timeAggregation: 'Maximum'
        }
      ]
    }
    autoMitigate: true
    actions: actions
  }
}

// Only for the Azure OpenAI resource this template created: an existing one may be shared, and its owner alerts.
resource openAiThrottled 'Microsoft.Insights/metricAlerts@2026-01-01' = if (!empty(openAiAccountName)) {
  name: 'Azure OpenAI throttled requests 429'
  location: 'global'
  tags: tags
  properties: {
    description: 'Azure OpenAI answered requests with 429: a deployment ran out of its tokens-per-minute quota. The app retries, then the turn fails. Raise the deployment capacity (chatDeploymentCapacity, embeddingDeploymentCapacity) or the quota.'
    severity: 2
    enabled: true
    scopes: [
      openAiAccount.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'Throttled'
          metricNamespace: 'Microsoft.CognitiveServices/accounts'
          metricName: 'AzureOpenAIRequests'
          dimensions: [
            {
              name: 'StatusCode'
              operator: 'Include'
              values: [
                '429'
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Total'
        }
      ]
    }
    autoMitigate: true
    actions: actions
  }
}

resource openAiLatency 'Microsoft.Insights/metricAlerts@2026-01-01' = if (!empty(openAiAccountName)) {
  name: 'Azure OpenAI slow first token'
  location: 'global'
  tags: tags
  properties: {
    description: 'Azure OpenAI took more than ${openAiTimeToResponseThresholdMs} ms on average to the first token of a response, over 15 minutes: users wait before their answer starts to stream. Check the Azure OpenAI service health and the deployment\'s load; a reasoning model also answers later as prompts grow.'
    severity: 3
    enabled: true
    scopes: [
      openAiAccount.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'TimeToResponse'
          metricNamespace: 'Microsoft.CognitiveServices/accounts'
          metricName: 'AzureOpenAITimeToResponse'
          operator: 'GreaterThan'
          threshold: openAiTimeToResponseThresholdMs
          timeAggregation: 'Average'
        }
      ]
    }
    autoMitigate: true
    actions: actions
  }
}

// The turn outcomes the app counts (metric chat.turns, attribute chat.turn.outcome), as Application Insights stores
// them in AppMetrics: a counter's row holds its increase in Sum. Below five turns an hour one failure is no rate.
resource failedTurns 'Microsoft.Insights/scheduledQueryRules@2026-03-01' = {
  name: 'Chat turns failing'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: 'Chat turns failing'
    description: 'More than ${failedTurnPercentThreshold}% of the chat turns of the last hour failed (users saw an error event instead of an answer). Open the workbook "Chat operations" for the trend, then Application Insights > Failures, or the traces of the failed turns (span status error), to see which step fails.'
    severity: 1
    enabled: true
    scopes: [
      logAnalytics.id
    ]
    evaluationFrequency: 'PT15M'
    windowSize: 'PT1H'
    criteria: {
      allOf: [
        {
          query: '''
AppMetrics
| where Name == "chat.turns"
| extend Outcome = tostring(Properties["chat.turn.outcome"])
| summarize Failed = sumif(Sum, Outcome == "failed"), Turns = sum(Sum)
| where Turns >= 5
| project FailedPercent = 100.0 * Failed / Turns
'''
          timeAggregation: 'Maximum'
          metricMeasureColumn: 'FailedPercent'
          operator: 'GreaterThan'
          threshold: failedTurnPercentThreshold
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    // On a new workspace the tables the query reads (AppMetrics, AppTraces) exist only once the app has sent
    // telemetry; validating the query against them would fail the deployment.
    skipQueryValidation: true
    actions: {
      actionGroups: [
        actionGroup.id
      ]
    }
  }
}

// Azure budgets have no daily period, so the app's own cost records are summed: one `llm-usage {json}` trace per
// model call (chat rounds and background work alike), priced with LLM_PRICES. The day is the UTC day so far.
resource dailySpend 'Microsoft.Insights/scheduledQueryRules@2026-03-01' = {
  name: 'Model spend of the day'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: 'Model spend of the day'
    description: 'The model calls of this UTC day so far cost more than ${dailySpendAlertUsd} US dollars, as the app prices them with LLM_PRICES. Open the workbook "Chat operations" (Top users by cost, Tokens and cost by model) to see who and what spends; lower the QUOTA_COST_PER_MONTH or QUOTA_TOKENS_PER_DAY quotas to cap it.'
    severity: 2
    enabled: true
    scopes: [
      logAnalytics.id
    ]
    evaluationFrequency: 'PT1H'
    windowSize: 'P1D'
    criteria: {
      allOf: [
        {
          query: '''
AppTraces
| where TimeGenerated >= startofday(now())
| where Message startswith "llm-usage "
| extend Usage = parse_json(substring(Message, 10))
| summarize SpendUsd = sum(todouble(Usage.costUsd))
'''
          timeAggregation: 'Total'
          metricMeasureColumn: 'SpendUsd'
          operator: 'GreaterThan'
          threshold: dailySpendAlertUsd
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    // On a new workspace the tables the query reads (AppMetrics, AppTraces) exist only once the app has sent
    // telemetry; validating the query against them would fail the deployment.
    skipQueryValidation: true
    actions: {
      actionGroups: [
        actionGroup.id
      ]
    }
  }
}

output actionGroupId string = actionGroup.id
