#!/usr/bin/env node
/**
 * Generates ctxsim's builtin price table from LiteLLM's
 * `model_prices_and_context_window.json`.
 *
 *   npm run gen:prices                 # reads ../shared/data/litellm_prices/model_prices_and_context_window.json
 *   npm run gen:prices -- path/to/model_prices_and_context_window.json
 *
 * Keeps chat and embedding models that have an input price, and only the
 * fields ctxsim reads, so the shipped file stays small. The output is stable:
 * models sorted by name, one model per line, fields in a fixed order.
 * The source date comes from the table's `last_updated` (or `--date YYYY-MM-DD`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_SOURCE = resolve(ROOT, '../shared/data/litellm_prices/model_prices_and_context_window.json');
const TARGET = resolve(ROOT, 'src/pricing/builtin-prices.json');

/** The LiteLLM fields ctxsim uses, in the order they are written. */
const FIELDS = [
  'litellm_provider',
  'mode',
  'input_cost_per_token',
  'output_cost_per_token',
  'cache_read_input_token_cost',
  'cache_creation_input_token_cost',
  'cache_creation_input_token_cost_above_1hr',
  'max_input_tokens',
];
const MODES = new Set(['chat', 'embedding']);


/**
 * The snapshot text for a parsed LiteLLM table: a `_meta` header, then the
 * kept models sorted by name, one per line. `date` defaults to the table's
 * `last_updated` day.
 */
export function snapshot(table, date) {
  date ??= typeof table.last_updated === 'string' ? table.last_updated.slice(0, 10) : undefined;
  if (!date || !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    throw new Error('the source has no last_updated date: pass --date YYYY-MM-DD');
  }
  const names = Object.keys(table)
    .filter((k) => k !== 'sample_spec' && isModel(table[k]))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const meta = {
    generatedBy: 'scripts/gen-prices.mjs',
    source: "LiteLLM's model_prices_and_context_window.json",
    sourceDate: date,
    regenerate: 'npm run gen:prices -- path/to/model_prices_and_context_window.json',
    content: 'chat and embedding models with an input price; only the fields ctxsim uses. Do not edit by hand.',
  };
  const lines = [`  "_meta": ${JSON.stringify(meta)}`];
  for (const name of names) lines.push(`  ${JSON.stringify(name)}: ${JSON.stringify(pick(table[name]))}`);
  return { text: `{\n${lines.join(',\n')}\n}\n`, models: names.length, date };
}

function isModel(e) {
  return e !== null && typeof e === 'object' && MODES.has(e.mode) && typeof e.input_cost_per_token === 'number';
}

function pick(e) {
  const out = {};
  for (const f of FIELDS) if (e[f] !== undefined && e[f] !== null) out[f] = e[f];
  return out;
}

function main(argv) {
  let source = DEFAULT_SOURCE;
  let date;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--date') date = argv[++i];
    else source = resolve(argv[i]);
  }
  let text;
  try {
    text = readFileSync(source, 'utf8');
  } catch {
    process.stderr.write(`gen-prices: cannot read ${source}; pass the path of model_prices_and_context_window.json\n`);
    process.exit(2);
  }
  const out = snapshot(JSON.parse(text), date);
  writeFileSync(TARGET, out.text);
  process.stderr.write(`wrote ${out.models} models (source date ${out.date}) to src/pricing/builtin-prices.json\n`);
}

// Run only when invoked as a script (tests import `snapshot`).
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main(process.argv.slice(2));
