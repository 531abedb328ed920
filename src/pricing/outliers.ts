import type { Pico } from '../types.js';
import type { ModelPrice, PriceTable } from './prices.js';

/**
 * Prices that look like unit mistakes: a per-million or per-thousand price
 * written where LiteLLM's format wants one per token. A price table lists
 * the same model under many providers (`deepinfra/Qwen/…`,
 * `together_ai/Qwen/…`, Bedrock's `us.meta.llama…-v1:0`), so a price can be
 * held to the others of its base model; and no text model costs more than
 * $1,000 per million tokens.
 */

/** The price fields held to the others: a model's input and output price per token. */
export const CHECKED_FIELDS = ['input', 'output'] as const;
export type CheckedField = (typeof CHECKED_FIELDS)[number];

/** How many times the median of the same base model elsewhere a price may reach before it is an outlier. */
export const OUTLIER_RATIO = 100n;

/** The dearest price that is not an outlier whatever the others say: $1,000 per million tokens, in pico-dollars per token. */
export const MAX_SANE_PRICE: Pico = 1_000_000_000n;

/**
 * The base model of a price table's entry: what is left of its name once
 * where it is served from is taken away. In order:
 *
 * 1. the last `/`-separated part (`wandb/Qwen/Qwen3-235B-A22B-Instruct-2507`
 *    → `Qwen3-235B-A22B-Instruct-2507`: the provider and the publisher go);
 * 2. lower case;
 * 3. leading dotted words that start with a letter and are followed by a
 *    letter, Bedrock's region and vendor (`us.anthropic.claude-3-haiku…`
 *    → `claude-3-haiku…`, `ai21.j2-mid-v1` → `j2-mid-v1`), never a version
 *    (`qwen2.5-72b`, `gpt-4.1` stay);
 * 4. a trailing `@…` (Vertex AI's `claude-3-haiku@20240307`), then a
 *    trailing `-vN` or `-vN:M` (Bedrock's `-v1:0`), then a trailing `:N`.
 *
 * Two entries are the same base model when these are equal. Nothing else is
 * taken away: a size, a date or a variant (`-instruct`, `-turbo`, `:free`)
 * keeps models apart, so a distinct model is never held to another's price.
 */
export function baseModel(name: string): string {
  return name
    .slice(name.lastIndexOf('/') + 1)
    .toLowerCase()
    .replace(/^(?:[a-z][a-z0-9]*\.)+(?=[a-z])/, '')
    .replace(/@.*$/, '')
    .replace(/-v\d+(?::\d+)?$/, '')
    .replace(/:\d+$/, '');
}

/** A price that looks wrong, with what it was held to. */
export interface PriceOutlier {
  /** The entry's name in the price table. */
  model: string;
  field: CheckedField;
  /** The price, pico-dollars per token. */
  price: Pico;
  /** The median price of the same base model's other entries (those with a price above 0), when there are any. */
  median?: Pico;
  /** How many other entries the median is of. */
  others: number;
  /** At least `OUTLIER_RATIO` times the median. */
  aboveMedian: boolean;
  /** Above `MAX_SANE_PRICE`. */
  aboveMax: boolean;
}

/** The median of prices (sorted in place); of an even count, the mean of the middle two, rounded down. */
function median(prices: Pico[]): Pico {
  prices.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const m = prices.length >> 1;
  return prices.length % 2 ? prices[m]! : (prices[m - 1]! + prices[m]!) / 2n;
}

/** The table's entries by base model (computed once per table). */
const groups = new WeakMap<PriceTable, Map<string, ModelPrice[]>>();

function byBase(table: PriceTable): Map<string, ModelPrice[]> {
  let g = groups.get(table);
  if (!g) {
    g = new Map();
    for (const p of table.models.values()) {
      const base = baseModel(p.model);
      const list = g.get(base);
      if (list) list.push(p);
      else g.set(base, [p]);
    }
    groups.set(table, g);
  }
  return g;
}

/**
 * The prices of `models` (default: every entry of the table, in name
 * order) that are outliers: at least 100 times the median of the same base
 * model's other entries, or above $1,000 per million tokens. A price of 0
 * (free, or not known) is never one, and is left out of the medians. A name
 * the table does not hold is skipped.
 */
export function priceOutliers(table: PriceTable, models?: Iterable<string>): PriceOutlier[] {
  const names = models ? [...new Set(models)] : [...table.models.keys()].sort();
  const out: PriceOutlier[] = [];
  for (const name of names) {
    const p = table.models.get(name);
    if (!p) continue;
    const others = byBase(table).get(baseModel(name))!.filter((o) => o !== p);
    for (const field of CHECKED_FIELDS) {
      const price = p[field];
      if (price <= 0n) continue;
      const priced = others.map((o) => o[field]).filter((x) => x > 0n);
      const m = priced.length ? median(priced) : undefined;
      const aboveMedian = m !== undefined && price >= OUTLIER_RATIO * m;
      const aboveMax = price > MAX_SANE_PRICE;
      if (aboveMedian || aboveMax) out.push({ model: name, field, price, ...(m !== undefined && { median: m }), others: priced.length, aboveMedian, aboveMax });
    }
  }
  return out;
}

/** USD per million tokens of a price per token, for a sentence: `$10,000`, `$2.50`, `$0.155`, `$0.10` (three significant digits below a dollar, at least two decimals). */
export function perMillionText(p: Pico): string {
  const usd = Number(p) / 1e6;
  if (usd >= 1) return `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).replace(/\.00$/, '')}`;
  const [whole, decimals = ''] = String(Number(usd.toPrecision(3))).split('.');
  return `$${whole}.${decimals.padEnd(2, '0')}`;
}

/** How many times the median a price is, for a sentence: `100,000×`, `250×`. */
function times(price: Pico, median: Pico): string {
  return `${Math.round(Number(price) / Number(median)).toLocaleString('en-US')}×`;
}

/**
 * An outlier in one line: the entry's name, the price and what it was held
 * to, e.g. `wandb/Qwen/Qwen3-235B-A22B-Instruct-2507: input $10,000 per
 * million tokens, 64,516× the median of the same model elsewhere ($0.155,
 * over 4 entries), and above $1,000 per million tokens`.
 */
export function outlierText(o: PriceOutlier): string {
  const why = [
    ...(o.aboveMedian ? [`${times(o.price, o.median!)} the median of the same model elsewhere (${perMillionText(o.median!)}, over ${o.others} entr${o.others === 1 ? 'y' : 'ies'})`] : []),
    ...(o.aboveMax ? [`above ${perMillionText(MAX_SANE_PRICE)} per million tokens`] : []),
  ];
  return `${o.model}: ${o.field} ${perMillionText(o.price)} per million tokens, ${why.join(', and ')}`;
}
