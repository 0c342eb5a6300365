// The one user-assigned identity the function app runs as. Every data-plane role in infra/ is granted to it, and
// the app names it through AZURE_CLIENT_ID and the `__clientId` settings.
param name string
param location string
param tags object

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

output id string = identity.id
output name string = identity.name
output clientId string = identity.properties.clientId
output principalId string = identity.properties.principalId
