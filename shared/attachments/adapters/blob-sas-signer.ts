// Signed URLs to one blob, with a user delegation key (no account key anywhere): one key is asked for and reused
// until near its end, and each URL names its own permissions and lifetime. Attachments and data archives sign here.
import {
  BlobSASPermissions,
  generateBlobSASQueryParameters,
  SASProtocol,
  type UserDelegationKey,
} from '@azure/storage-blob';

/**
 * The signed version of the URLs: one both Azure and the local emulator (Azurite 3.35) sign alike. The SDK's own
 * default (2026-04-06) adds fields to the string to sign that the emulator does not know yet.
 */
export const SAS_VERSION = '2025-07-05';
/** A URL (and a key) starts this much before now, for clocks that differ. */
export const CLOCK_SKEW_MS = 5 * 60_000;
/** A key is asked for a day, and renewed once it has less than an hour beyond the URL being signed. */
const KEY_LIFETIME_MS = 24 * 3_600_000;
const KEY_RENEW_MARGIN_MS = 3_600_000;
/** Azure's longest user delegation key. */
const KEY_MAX_LIFETIME_MS = 7 * 24 * 3_600_000;

/** One blob to sign for: its URL, container and name. */
export interface SignedBlob {
  url: string;
  containerName: string;
  name: string;
}

export interface SasGrant {
  /** Blob SAS permission letters, e.g. `r` to read, `cw` to create and write. */
  permissions: string;
  expiresOn: Date;
}

export interface BlobSasSigner {
  /** The blob's URL with a SAS that allows `permissions` on it alone, from a little before now to `expiresOn`. */
  signedUrl(blob: SignedBlob, grant: SasGrant): Promise<string>;
}

/** The part of a service client the signer needs: its account, and the user delegation keys it asks for. */
export interface DelegationKeySource {
  readonly accountName: string;
  /** The account's endpoint, which every blob's URL starts with. */
  readonly url: string;
  getUserDelegationKey(startsOn: Date, expiresOn: Date): Promise<UserDelegationKey>;
}

export interface SignerOptions {
  now?: () => Date;
  /**
   * Where a client reaches the account, when not at the endpoint the app calls: the local runtime's own origin, whose
   * proxy forwards to the emulator (a SAS binds the blob's path and the query, not the host). Absent: the endpoint.
   */
  publicEndpoint?: string | undefined;
}

export function createBlobSasSigner(
  service: DelegationKeySource,
  options: SignerOptions = {},
): BlobSasSigner {
  const now = options.now ?? (() => new Date());
  const endpoint = service.url.replace(/\/$/, '');
  const publicUrl = (url: string) =>
    options.publicEndpoint !== undefined && url.startsWith(`${endpoint}/`)
      ? `${options.publicEndpoint.replace(/\/$/, '')}${url.slice(endpoint.length)}`
      : url;
  // The key asked for (or being asked for), and the end it was asked with: URLs signed at once share one ask.
  let key: { asked: Promise<UserDelegationKey>; expiresOn: number } | undefined;
  // One key signs every URL of this process until near its end (asking for one is a round trip).
  const delegationKey = (at: Date, until: Date): Promise<UserDelegationKey> => {
    if (key !== undefined && key.expiresOn - KEY_RENEW_MARGIN_MS >= until.getTime()) return key.asked;
    const lifetime = Math.min(
      KEY_MAX_LIFETIME_MS - CLOCK_SKEW_MS,
      Math.max(KEY_LIFETIME_MS, until.getTime() - at.getTime() + KEY_RENEW_MARGIN_MS),
    );
    const expiresOn = at.getTime() + lifetime;
    const asked = service.getUserDelegationKey(new Date(at.getTime() - CLOCK_SKEW_MS), new Date(expiresOn));
    const current = { asked, expiresOn };
    key = current;
    // A failed ask is not kept: the next URL asks again.
    asked.catch(() => {
      if (key === current) key = undefined;
    });
    return asked;
  };

  return {
    async signedUrl(blob, grant) {
      const at = now();
      const signing = await delegationKey(at, grant.expiresOn);
      const sas = signBlobSas(blob, grant, signing, service.accountName, at);
      return `${publicUrl(blob.url)}?${sas}`;
    },
  };
}

/** The SAS query of one blob, signed with a user delegation key (HTTPS only unless the blob's URL is plain HTTP). */
export function signBlobSas(
  blob: SignedBlob,
  grant: SasGrant,
  key: UserDelegationKey,
  accountName: string,
  now: Date,
): string {
  return generateBlobSASQueryParameters(
    {
      containerName: blob.containerName,
      blobName: blob.name,
      permissions: BlobSASPermissions.parse(grant.permissions),
      startsOn: new Date(now.getTime() - CLOCK_SKEW_MS),
      expiresOn: grant.expiresOn,
      version: SAS_VERSION,
      protocol: blob.url.startsWith('https:') ? SASProtocol.Https : SASProtocol.HttpsAndHttp,
    },
    key,
    accountName,
  ).toString();
}
