import { loadPrices } from '../pricing/load.js';
import { outlierText, priceOutliers } from '../pricing/outliers.js';
import type { PriceTable } from '../pricing/prices.js';
import { settingsModels } from '../pricing/settings.js';
import type { Study } from './study.js';

/** The most outliers said one line each before a run; the rest are counted. */
export const MAX_PRICE_WARNINGS = 5;

/** The models a study prices: its chat models, routed and fallback models, the judge, and the models named in policy parameters, in that order. */
export function studyModels(study: Study): string[] {
  const fromPolicies = study.policies.flatMap((v) =>
    Object.entries(v.params)
      .filter(([k, val]) => /Model$/.test(k) && typeof val === 'string')
      .map(([, val]) => val as string),
  );
  return [...new Set([...study.models, ...settingsModels(study), ...(study.judge !== undefined ? [study.judge] : []), ...fromPolicies])];
}

/**
 * What a run says, before it starts, of the prices it would use that look
 * wrong (`priceOutliers`: at least 100× the median of the same model
 * elsewhere, or above $1,000 per million tokens): those of the study's
 * models, and every entry of a price file the study lays over the builtin
 * table. One line each, at most `MAX_PRICE_WARNINGS`, then how many more.
 */
export function priceWarnings(study: Study, table: PriceTable = loadPrices(study.prices)): string[] {
  const found = priceOutliers(table, [...studyModels(study), ...(table.userModels ?? [])]);
  const lines = found.slice(0, MAX_PRICE_WARNINGS).map((o) => `price of ${outlierText(o)}: a unit mistake in the price table? (ctxsim prices --check lists every such price)`);
  if (found.length > MAX_PRICE_WARNINGS) lines.push(`and ${found.length - MAX_PRICE_WARNINGS} more prices as doubtful: ctxsim prices --check lists them`);
  return lines;
}
