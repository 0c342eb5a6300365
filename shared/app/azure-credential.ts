// The app's one Azure credential, shared by every Azure client the composition root and telemetry make.
import { DefaultAzureCredential, type TokenCredential } from '@azure/identity';
import type { AppConfig } from './config.js';

/**
 * The app's Azure credential: its user-assigned managed identity when AZURE_CLIENT_ID is set; otherwise the
 * default chain, which locally is the developer's `az login` (or VS Code / azd sign-in). Nothing is fetched
 * until a token is first needed.
 */
export function createAzureCredential(config: AppConfig): TokenCredential {
  return new DefaultAzureCredential(
    config.managedIdentityClientId ? { managedIdentityClientId: config.managedIdentityClientId } : {},
  );
}
