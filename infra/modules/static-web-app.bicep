// The web client on Static Web Apps' Free plan: files from the global edge, nothing billed at idle. It calls the
// function app across origins (that app's CORS lists this site) with Entra ID bearer tokens.
param name string

@description('Where the site\'s metadata lives; its files are served from the edge whatever the region.')
param location string
param tags object

resource site 'Microsoft.Web/staticSites@2024-04-01' = {
  name: name
  location: location
  // azd deploys the `web` service of azure.yaml (dist/web, staged by scripts/stage-web-app.ts) to this site.
  tags: union(tags, {
    'azd-service-name': 'web'
  })
  sku: {
    name: 'Free'
    tier: 'Free'
  }
  properties: {
    // Files are uploaded by azd, not built from a repository by a GitHub workflow.
    provider: 'None'
    // Free plan: no pull-request preview environments to pay or secure.
    stagingEnvironmentPolicy: 'Disabled'
    // staticwebapp.config.json (headers, fallback, caching) is part of each deployment.
    allowConfigFileUpdates: true
  }
}

output name string = site.name
output uri string = 'https://${site.properties.defaultHostname}'
