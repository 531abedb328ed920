import { pricesTable } from '../report/prices.js';
import { loadPrices } from '../pricing/load.js';
import { lookup, matchModels } from '../pricing/prices.js';
import { settingsModels, type CostSettings } from '../pricing/settings.js';
import type { IO } from './_io.js';
import { studyFromFlags } from './_study.js';
import { tokenizerUnavailable } from '../tokens/chat-template.js';
import type { Study } from '../study/study.js';

export interface PricesFlags {
  patterns?: string[];
  study?: string;
  prices?: string;
  cache?: string;
  all?: boolean;
}

/** `ctxsim prices`: the price table in use, for the models the patterns name or those the study uses. */
export async function prices(flags: PricesFlags, io: IO): Promise<number> {
  // Nothing is sent: a study that records its upkeep is read as if simulated.
  const study = await studyFromFlags({ study: flags.study, prices: flags.prices, cache: flags.cache, upkeep: 'simulate', tokenCache: false });
  const table = loadPrices(study.prices);
  const settings: CostSettings = { ...study };
  let names: string[];
  if (flags.patterns?.length) names = flags.patterns.flatMap((p) => matchModels(table, p));
  else if (flags.all) names = [...table.models.keys()].sort();
  else names = studyModels(study, settings, table.userModels ?? []);
  const models = [...new Set(names)].map((m) => lookup(table, m));
  const counting = { tokenizer: study.tokenizer, unavailable: tokenizerUnavailable, ...(study.tokenFactor !== undefined && { tokenFactor: study.tokenFactor }) };
  io.out(pricesTable(table, models, settings, counting));
  return 0;
}

/** The chat models, routed and fallback models, models named in policy parameters, then a user table's models. */
function studyModels(study: Study, s: CostSettings, user: readonly string[]): string[] {
  const fromPolicies = study.policies.flatMap((v) =>
    Object.entries(v.params)
      .filter(([k, val]) => /Model$/.test(k) && typeof val === 'string')
      .map(([, val]) => val as string),
  );
  return [...study.models, ...settingsModels(s), ...fromPolicies, ...user];
}
