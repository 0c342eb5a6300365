// Writes samples/security-guide.pdf, the small PDF the README's knowledge-base example uploads.
//   npx tsx scripts/make-sample-pdf.ts
import { writeFileSync } from 'node:fs';
import { makePdf } from '../test/support/make-pdf.js';

const pages = [
  [
    'Contoso Security Guide',
    '',
    'Passwords',
    'Use a password manager. Passwords are at least 14 characters long and are never reused.',
    'Turn on multi-factor authentication for every work account.',
  ],
  [
    'Devices',
    'Lock your screen whenever you leave your desk. Laptops are encrypted with BitLocker.',
    'Report a lost or stolen device to security@contoso.example within one hour.',
    '',
    'Phishing',
    'Forward suspicious e-mail to phishing@contoso.example and do not click its links.',
  ],
];

writeFileSync('samples/security-guide.pdf', makePdf(pages, { title: 'Contoso Security Guide' }));
console.log('Wrote samples/security-guide.pdf');
