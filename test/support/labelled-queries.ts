// A small labelled set for knowledge search: the test handbook (test/fixtures/knowledge/handbook.md) and two PDFs,
// queries each labelled with the passage that answers it, and queries that nothing in them answers. Scored as
// recall@3 (a labelled passage among the first three results) and the share of no-match queries answered empty.
import { readFileSync } from 'node:fs';
import { makePdf } from './make-pdf.js';

export interface LabelledDocument {
  fileName: string;
  format: 'markdown' | 'pdf';
  title: string;
  content: Uint8Array;
}

const HANDBOOK = new Uint8Array(readFileSync(new URL('../fixtures/knowledge/handbook.md', import.meta.url)));

/**
 * One page about the size of one chunk at 60 tokens (KNOWLEDGE_CHUNK_TOKENS 60, no overlap): a page is a passage,
 * and a chunk holds one page.
 */
export const SECURITY_PAGES = [
  [
    'Security Guide',
    'Everyone signs in with a hardware key issued on the first day at the office.',
    'Lost keys are reported to the service desk the same day.',
  ],
  [
    'Laptops are encrypted with a recovery passphrase kept by the service desk.',
    'A laptop left unattended in a public place is locked before you step away.',
  ],
  [
    'Visitors wear a badge and are escorted at all times inside the building.',
    'Badges are returned at reception when the visitor leaves the premises.',
  ],
];

const TRAVEL_PAGES = [
  [
    'Travel Policy',
    'Flights longer than six hours may be booked in premium economy.',
    'Book all flights through the travel desk at least two weeks ahead.',
  ],
  [
    'Trains are preferred over flights for trips under four hours.',
    'Rental cars need the approval of your manager before the trip.',
  ],
  [
    'A per diem allowance covers meals and local transport abroad.',
    'Keep your boarding passes: the expense claim needs them.',
  ],
];

export const LABELLED_DOCUMENTS: readonly LabelledDocument[] = [
  { fileName: 'handbook.md', format: 'markdown', title: 'Employee Handbook', content: HANDBOOK },
  {
    fileName: 'security.pdf',
    format: 'pdf',
    title: 'Security Guide',
    content: makePdf(SECURITY_PAGES, { title: 'Security Guide' }),
  },
  {
    fileName: 'travel.pdf',
    format: 'pdf',
    title: 'Travel Policy',
    content: makePdf(TRAVEL_PAGES, { title: 'Travel Policy' }),
  },
];

/** The chunk size the set is cut at (KNOWLEDGE_CHUNK_TOKENS): each section or page its own passage. */
export const LABELLED_CHUNK_TOKENS = 60;

/** A query and a phrase of the passage that answers it (a chunk answers when its text holds the phrase). */
export const ANSWERED_QUERIES: readonly (readonly [query: string, answer: string])[] = [
  ['How many days of annual leave do I get?', '25 days'],
  ['Can unused holiday days carry over?', 'carry over'],
  ['What do I do when I am sick?', "doctor's note"],
  ['Do part-time staff need a doctor note?', 'Part-time staff'],
  ['expense claim approval above 500 EUR', "director's approval"],
  ['hotel limit per day', '180 EUR'],
  ['How do I reset my VPN profile?', 'contoso-vpn reset'],
  ['legacy client for older laptops', 'legacy client'],
  ['lost hardware key', 'Lost keys'],
  ['laptop recovery passphrase', 'recovery passphrase'],
  ['visitor badge at reception', 'Badges are returned'],
  ['locking an unattended laptop', 'unattended'],
  ['premium economy on long flights', 'premium economy'],
  ['Can I take a rental car?', 'Rental cars'],
  ['meal allowance abroad', 'per diem'],
  ['train or flight for a short trip', 'Trains are preferred'],
];

/** Queries nothing in the documents answers: a search should return nothing. */
export const UNANSWERED_QUERIES: readonly string[] = [
  'quantum chromodynamics',
  'stock options vesting schedule',
  'canteen lasagne recipe',
  'pension fund contributions',
  'gym membership discount',
];

export interface LabelledFigures {
  /** Share of answered queries with an answering passage among the first three results. */
  recallAt3: number;
  /** Share of unanswered queries whose search returned nothing. */
  emptyRate: number;
  /** The answered queries whose answer was not in the first three. */
  missed: string[];
  /** The unanswered queries that returned something, with how many results. */
  answeredAnyway: { query: string; results: number }[];
}

/** Runs the set through `search` (a query to its results' texts, best first) and scores it. */
export async function scoreLabelledSet(
  search: (query: string) => Promise<string[]>,
): Promise<LabelledFigures> {
  const missed: string[] = [];
  for (const [query, answer] of ANSWERED_QUERIES) {
    const texts = await search(query);
    if (!texts.slice(0, 3).some((text) => text.includes(answer))) missed.push(query);
  }
  const answeredAnyway: { query: string; results: number }[] = [];
  for (const query of UNANSWERED_QUERIES) {
    const results = (await search(query)).length;
    if (results > 0) answeredAnyway.push({ query, results });
  }
  return {
    recallAt3: round2((ANSWERED_QUERIES.length - missed.length) / ANSWERED_QUERIES.length),
    emptyRate: round2((UNANSWERED_QUERIES.length - answeredAnyway.length) / UNANSWERED_QUERIES.length),
    missed,
    answeredAnyway,
  };
}

const round2 = (value: number) => Math.round(value * 100) / 100;
