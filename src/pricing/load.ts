import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { hasControl, ScenarioError, type Problem } from '../errors.js';
import { readInputText, unreadableReason } from '../process.js';
import { SourceDoc } from '../text/document.js';
import { compileTable, mergeEntries, rawEntries, type PriceTable, type RawEntry } from './prices.js';

/**
 * The snapshot's shape. Referring to the file here also keeps it in the
 * TypeScript program, so the build copies it beside this module; it is read
 * at run time (a static JSON import of 2,000 models is slow to load in tests).
 */
type BuiltinSnapshot = typeof import('./builtin-prices.json', { with: { type: 'json' } });

let snapshot: BuiltinSnapshot | undefined;
function builtinJson(): BuiltinSnapshot {
  snapshot ??= JSON.parse(readFileSync(new URL('./builtin-prices.json', import.meta.url), 'utf8')) as BuiltinSnapshot;
  return snapshot;
}

/** The date of LiteLLM's table the builtin snapshot was generated from (its `_meta` header). */
export const BUILTIN_DATE: string = builtinJson()._meta.sourceDate;

const BUILTIN_FILE = 'src/pricing/builtin-prices.json';
let builtinEntries: Map<string, RawEntry> | undefined;
let builtinTable: PriceTable | undefined;

function builtinRaw(): Map<string, RawEntry> {
  builtinEntries ??= rawEntries(builtinJson());
  return builtinEntries;
}

/** The builtin price table (compiled once). */
export function builtinPrices(): PriceTable {
  builtinTable ??= compileTable(builtinRaw(), { date: BUILTIN_DATE, source: 'builtin' }, (model, field) => ({
    file: BUILTIN_FILE,
    path: field ? `${model}.${field}` : model,
    message: '',
  }));
  return builtinTable;
}

/**
 * The price table a study asks for: `builtin`, or a path to a LiteLLM-format
 * JSON file laid over the builtin table (its models replace or extend the
 * builtin ones, field by field). Bad values are reported with file, line,
 * model and field.
 */
export function loadPrices(spec: string): PriceTable {
  if (spec === 'builtin') return builtinPrices();
  const file = resolve(spec);
  const rel = relative(process.cwd(), file);
  const shown = rel && !rel.startsWith('..') ? rel : file;
  let text: string;
  try {
    text = readInputText(file, { shown });
  } catch (e) {
    throw new ScenarioError([{ file: shown, path: '', message: unreadableReason(e, 'price table') }]);
  }
  const src = parseTable(shown, text);
  const root = src.value;
  if (root === null || typeof root !== 'object' || Array.isArray(root)) {
    throw new ScenarioError([src.problem([], 'expected a JSON object mapping model names to price entries')]);
  }
  const problems: Problem[] = [];
  for (const [k, v] of Object.entries(root)) {
    if (k === 'sample_spec' || k.startsWith('_') || typeof v !== 'object' || v === null) continue;
    // A model's name is printed in every table, chart and log: a control character there would drive the terminal, or break the chart's SVG.
    if (hasControl(k)) problems.push(src.problem([k], 'a model name may not hold control or invisible format characters'));
    else if (Array.isArray(v)) problems.push(src.problem([k], 'expected a price entry (a JSON object), got a list'));
  }
  if (problems.length) throw new ScenarioError(problems);
  const user = rawEntries(root);
  const base = builtinRaw();
  const table = compileTable(mergeEntries(base, user), { date: BUILTIN_DATE, source: `builtin + ${shown}` }, (model, field) =>
    user.has(model)
      ? src.problem(field && field in user.get(model)! ? [model, field] : [model], '')
      : { file: BUILTIN_FILE, path: field ? `${model}.${field}` : model, message: '' },
  );
  // A file of another shape (the models one level down, a mapping of other things) would price nothing, silently.
  if (![...user.values()].some((e) => Object.keys(e).some((k) => ENTRY_KEY.test(k)))) {
    const keys = Object.keys(root);
    const shown = keys.length ? ` (its keys: ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''})` : '';
    throw new ScenarioError([src.problem([], `holds no model's entry${shown}: a LiteLLM-format table maps each model's name, at its top, to its entry {input_cost_per_token, output_cost_per_token, …}`)]);
  }
  return { ...table, userModels: [...user.keys()].filter((m) => table.models.has(m)) };
}

/** A key a LiteLLM entry has (a price, a window, its mode or provider): a table none of whose entries has one is of another shape. */
const ENTRY_KEY = /^(mode|litellm_provider)$|_cost_per_|_tokens$/;

/**
 * The price table's text, parsed. The YAML parser reads JSON too (and what
 * Python's json module writes, such as NaN, which strict JSON refuses) and
 * knows where every value is. A file it cannot read is one problem, the
 * first: a cut-off file would give several for one cause.
 */
function parseTable(file: string, text: string): SourceDoc {
  try {
    return SourceDoc.parse(file, text);
  } catch (e) {
    if (!(e instanceof ScenarioError)) throw e;
    const first = e.problems[0]!;
    throw new ScenarioError([{ ...first, message: `price table: ${first.message}` }]);
  }
}
