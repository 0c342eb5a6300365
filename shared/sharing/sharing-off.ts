// The one check every sharing route makes first: an operator may turn sharing off (SHARING=off).
import { AppError } from '../errors.js';
import type { SharingConfig } from './settings.js';

/** Sharing is turned off on this service: 403 with a problem that says so, whoever asks. */
export class SharingOffError extends AppError {
  constructor() {
    super(
      'sharing_off',
      'Sharing by link is turned off on this service (its operator set SHARING=off).',
      403,
    );
  }
}

export function requireSharing(config: SharingConfig): void {
  if (!config.enabled) throw new SharingOffError();
}
