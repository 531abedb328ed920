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
 * Prices LiteLLM later corrected upstream are corrected here too
 * (`CORRECTIONS`), and the `_meta` header names them.
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
 * Prices LiteLLM itself corrected after this table's date, in its pull
 * request 38167 ("store per-token costs per token, not per 1k or per 1M",
 * the fix of its issue 23503): entries holding a vendor's price per million
 * (wandb/*, off by 10^5) or per thousand tokens (azure_ai/jais-30b-chat,
 * off by 10^3) in a per-token field, and two watsonx models IBM prices at
 * $1.80 per million tokens. Each is `[the wrong value, the corrected one]`
 * in USD per token, and applies only while the source still holds the
 * wrong value: a newer table that has it right (or changed it otherwise)
 * is kept as it is.
 */
export const CORRECTIONS = {
  source: 'LiteLLM pull request 38167 (its issue 23503)',
  entries: {
    'azure_ai/jais-30b-chat': { input_cost_per_token: [0.0032, 3.2e-6], output_cost_per_token: [0.00971, 9.71e-6] },
    'wandb/Qwen/Qwen3-235B-A22B-Instruct-2507': { input_cost_per_token: [0.01, 1e-7], output_cost_per_token: [0.01, 1e-7] },
    'wandb/Qwen/Qwen3-235B-A22B-Thinking-2507': { input_cost_per_token: [0.01, 1e-7], output_cost_per_token: [0.01, 1e-7] },
    'wandb/Qwen/Qwen3-Coder-480B-A35B-Instruct': { input_cost_per_token: [0.1, 1e-6], output_cost_per_token: [0.15, 1.5e-6] },
    'wandb/deepseek-ai/DeepSeek-R1-0528': { input_cost_per_token: [0.135, 1.35e-6], output_cost_per_token: [0.54, 5.4e-6] },
    'wandb/deepseek-ai/DeepSeek-V3-0324': { input_cost_per_token: [0.114, 1.14e-6], output_cost_per_token: [0.275, 2.75e-6] },
    'wandb/deepseek-ai/DeepSeek-V3.1': { input_cost_per_token: [0.055, 5.5e-7], output_cost_per_token: [0.165, 1.65e-6] },
    'wandb/meta-llama/Llama-3.1-8B-Instruct': { input_cost_per_token: [0.022, 2.2e-7], output_cost_per_token: [0.022, 2.2e-7] },
    'wandb/meta-llama/Llama-3.3-70B-Instruct': { input_cost_per_token: [0.071, 7.1e-7], output_cost_per_token: [0.071, 7.1e-7] },
    'wandb/meta-llama/Llama-4-Scout-17B-16E-Instruct': { input_cost_per_token: [0.017, 1.7e-7], output_cost_per_token: [0.066, 6.6e-7] },
    'wandb/microsoft/Phi-4-mini-instruct': { input_cost_per_token: [0.008, 8e-8], output_cost_per_token: [0.035, 3.5e-7] },
    'wandb/openai/gpt-oss-120b': { input_cost_per_token: [0.015, 1.5e-7], output_cost_per_token: [0.06, 6e-7] },
    'wandb/openai/gpt-oss-20b': { input_cost_per_token: [0.005, 5e-8], output_cost_per_token: [0.02, 2e-7] },
    'wandb/zai-org/GLM-4.5': { input_cost_per_token: [0.055, 5.5e-7], output_cost_per_token: [0.2, 2e-6] },
    'watsonx/bigscience/mt0-xxl-13b': { input_cost_per_token: [0.0005, 1.8e-6], output_cost_per_token: [0.002, 1.8e-6] },
    'watsonx/core42/jais-13b-chat': { input_cost_per_token: [0.0005, 1.8e-6], output_cost_per_token: [0.002, 1.8e-6] },
  },
};


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
  const kept = new Map(names.map((name) => [name, pick(table[name])]));
  const corrected = correct(kept);
  const meta = {
    generatedBy: 'scripts/gen-prices.mjs',
    source: "LiteLLM's model_prices_and_context_window.json",
    sourceDate: date,
    regenerate: 'npm run gen:prices -- path/to/model_prices_and_context_window.json',
    content: 'chat and embedding models with an input price; only the fields ctxsim uses. Do not edit by hand.',
    ...(corrected.length && { corrected: `${corrected.length} entries as ${CORRECTIONS.source} corrected them: ${corrected.join(', ')}` }),
  };
  const lines = [`  "_meta": ${JSON.stringify(meta)}`];
  for (const [name, entry] of kept) lines.push(`  ${JSON.stringify(name)}: ${JSON.stringify(entry)}`);
  return { text: `{\n${lines.join(',\n')}\n}\n`, models: names.length, date, corrected };
}

/** Applies `CORRECTIONS` to the kept entries (in place): the names of those corrected, in name order. */
function correct(kept) {
  const out = [];
  for (const [name, fields] of Object.entries(CORRECTIONS.entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const entry = kept.get(name);
    if (!entry) continue;
    let changed = false;
    for (const [field, [wrong, right]] of Object.entries(fields)) {
      if (entry[field] !== wrong) continue;
      entry[field] = right;
      changed = true;
    }
    if (changed) out.push(name);
  }
  return out;
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
  process.stderr.write(`wrote ${out.models} models (source date ${out.date}) to src/pricing/builtin-prices.json${out.corrected.length ? `, ${out.corrected.length} of them corrected as ${CORRECTIONS.source} corrected them` : ''}\n`);
}

// Run only when invoked as a script (tests import `snapshot`).
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main(process.argv.slice(2));
