// The account's services composed once: the database the erase sweeps, the data archives' records (Cosmos DB) and
// bytes (the attachments' Blob container), and the account settings.
import type { Database } from '@azure/cosmos';
import type { TokenCredential } from '@azure/identity';
import type { BlobServiceClient } from '@azure/storage-blob';
import { createBlobArchiveStore } from '../account/adapters/blob-archive-store.js';
import { createCosmosExportRecords } from '../account/adapters/cosmos-export-records.js';
import { createCosmosKnowledgeText } from '../account/adapters/cosmos-knowledge-text.js';
import type { KnowledgeText } from '../account/archive-contents.js';
import type { ArchiveStore } from '../account/archive-store.js';
import { ACCOUNT_EXPORTS_CONTAINER } from '../account/contracts.js';
import type { ExportServices } from '../account/account-export.js';
import type { AccountConfig } from '../account/settings.js';
import { createBlobService } from '../attachments/adapters/blob-attachment-store.js';
import { createBlobSasSigner } from '../attachments/adapters/blob-sas-signer.js';
import { KNOWLEDGE_CHUNKS_CONTAINER } from '../knowledge/contracts.js';
import type { BlobPlatform } from './attachment-services.js';
import type { AppConfig } from './config.js';

export interface AccountServices {
  database: Database;
  settings: AccountConfig;
  /** Data archives: records, bytes and how their links are given. */
  exports: ExportServices;
  /** A knowledge document's text, for the archive. */
  knowledgeText: KnowledgeText;
}

export function composeAccount(
  config: AppConfig,
  platform: BlobPlatform & { credential: TokenCredential },
  database: Database,
): AccountServices {
  const local = platform.localBlob;
  const blob = config.attachments.blob;
  return {
    database,
    settings: config.account,
    exports: {
      records: createCosmosExportRecords(database.container(ACCOUNT_EXPORTS_CONTAINER)),
      archives:
        blob === undefined
          ? offArchives
          : archiveStore(
              createBlobService(blob, local?.credential ?? platform.credential, local?.agent),
              blob.container,
              local?.publicEndpoint,
            ),
      settings: { ttlHours: config.account.exportTtlHours, link: config.account.exportLink },
    },
    knowledgeText: createCosmosKnowledgeText(database.container(KNOWLEDGE_CHUNKS_CONTAINER)),
  };
}

/** Archives beside attachments, their download links signed with a user delegation key the store keeps. */
function archiveStore(
  service: BlobServiceClient,
  container: string,
  publicEndpoint: string | undefined,
): ArchiveStore {
  return createBlobArchiveStore(
    createBlobSasSigner(service, { publicEndpoint }),
    service.getContainerClient(container),
  );
}

/** No Blob endpoint: archives cannot be written (the job fails and says why), and there are none to delete. */
const offArchives: ArchiveStore = {
  write: () =>
    Promise.reject(new Error('Data archives need Blob Storage: ATTACHMENTS_BLOB_ENDPOINT is not set.')),
  open: () => Promise.resolve(undefined),
  signedUrl: () =>
    Promise.reject(new Error('Data archives need Blob Storage: ATTACHMENTS_BLOB_ENDPOINT is not set.')),
  delete: () => Promise.resolve(),
  deleteUser: () => Promise.resolve(0),
};
