// Settings of the knowledge and conversation searches (SEARCH_*): when a hit is relevant enough to be returned.
import { choiceSetting, defineSettings, textSetting, type SettingValues } from '../settings/setting.js';
import { minSimilarityFor, type Relevance } from './relevance.js';

const tuning = { kind: 'default' } as const;

export const searchSettings = defineSettings({
  SEARCH_MIN_SIMILARITY: textSetting({
    pattern: [/^(-?0(\.\d+)?|1(\.0+)?|-1(\.0+)?)$/, 'must be a number from -1 to 1, e.g. 0.3'],
    help:
      'Cosine similarity from which a search hit is kept on meaning alone (hits that hold a word of the query are ' +
      "kept anyway, see SEARCH_TEXT_MATCH_ADMITS). Empty: the embedding model's default (text-embedding-3-*: 0.3, " +
      'ada-002: 0.8, the offline stand-in: 0.3, any other: 0.3).',
    azure: tuning,
  }),
  SEARCH_TEXT_MATCH_ADMITS: choiceSetting(['true', 'false'], {
    default: 'true',
    help:
      '"true": a search hit that holds a word of the query (stop words aside, by stem) is kept whatever its ' +
      'similarity; "false": only SEARCH_MIN_SIMILARITY admits a hit, words only rank it.',
    azure: tuning,
  }),
});

/** The relevance rule for the embedding model (or Azure deployment) the app embeds with. */
export function searchRelevance(
  values: SettingValues<typeof searchSettings>,
  embeddingModel: string,
): Relevance {
  return {
    minSimilarity:
      values.SEARCH_MIN_SIMILARITY === undefined
        ? minSimilarityFor(embeddingModel)
        : Number(values.SEARCH_MIN_SIMILARITY),
    textMatchAdmits: values.SEARCH_TEXT_MATCH_ADMITS === 'true',
  };
}
