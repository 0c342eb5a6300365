// Imported first by the entry, before any module builds a schema: the page's CSP admits no eval, and zod would
// otherwise probe for it (and be refused, a CSP issue on every load) to compile its parsers.
import { config } from 'zod';

config({ jitless: true });
