import { pricesCheck, pricesTable } from '../report/prices.js';
import { loadPrices } from '../pricing/load.js';
import { lookup, matchModels } from '../pricing/prices.js';
import type { CostSettings } from '../pricing/settings.js';
import type { IO } from './_io.js';
import { studyFromFlags } from './_study.js';
import { tokenizerUnavailable } from '../tokens/chat-template.js';
import { priceOutliers, outlierText } from '../pricing/outliers.js';
import { studyModels } from '../study/price-check.js';

export interface PricesFlags {
  patterns?: string[];
  study?: string;
  prices?: string;
  cache?: string;
  all?: boolean;
  /** List the prices that look wrong (of the models named, else of the whole table) instead of the table. */
  check?: boolean;
}

/** `ctxsim prices`: the price table in use, for the models the patterns name or those the study uses. */
export async function prices(flags: PricesFlags, io: IO): Promise<number> {
  // Nothing is sent: a study that records its upkeep is read as if simulated.
  const study = await studyFromFlags({ study: flags.study, prices: flags.prices, cache: flags.cache, upkeep: 'simulate', tokenCache: false });
  const table = loadPrices(study.prices);
  const settings: CostSettings = { ...study };
  let names: string[];
  if (flags.patterns?.length) names = flags.patterns.flatMap((p) => matchModels(table, p));
  else if (flags.all || flags.check) names = [...table.models.keys()].sort();
  else names = [...studyModels(study), ...(table.userModels ?? [])];
  names = [...new Set(names)];
  if (flags.check) {
    io.out(pricesCheck(table, names.filter((m) => table.models.has(m)).length, priceOutliers(table, names)));
    return 0;
  }
  const models = names.map((m) => lookup(table, m));
  const counting = { tokenizer: study.tokenizer, unavailable: tokenizerUnavailable, ...(study.tokenFactor !== undefined && { tokenFactor: study.tokenFactor }) };
  io.out(pricesTable(table, models, settings, counting));
  // A price shown that looks like a unit mistake is said beside the table.
  for (const o of priceOutliers(table, names)) io.err(`ctxsim: warning: price of ${outlierText(o)}: a unit mistake in the price table?\n`);
  return 0;
}
