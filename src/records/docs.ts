import type { ColumnSpec, RecordKind } from './columns.js';
import { MADE_FROM, RECORD_KINDS } from './registry.js';
import { docsCell, DOCS_COMMAND } from '../text/markdown.js';

/** What a kind's rows are, for its section. */
const ROWS: Record<string, string> = {
  turns: 'One row per scenario × policy × turn.',
  probes: 'One row per probe: a fact a turn needs, scored on the prompt of its first call.',
  summary: 'One row per scenario × policy (× model, with several).',
  policies: 'One row per policy (× model, with several), over every scenario.',
  violations: 'One row per provider message rule a call’s prompt broke.',
};

/**
 * docs/columns.md: per record file, every column in file order (then the
 * fields only results.json has), with its results.json field, kind, how it
 * is made from the rows below and its doc line; all read from the record
 * registries.
 */
export function columnsMarkdown(kinds: readonly RecordKind[] = RECORD_KINDS): string {
  const out = [
    `<!-- Generated from the record registries (src/records/registry.ts) by scripts/gen-docs.mjs (${DOCS_COMMAND}); do not edit. -->`,
    '',
    '# Columns of the record files',
    '',
    'Part of the [ctxsim documentation](../README.md#documentation).',
    '',
    'Every column of `turns.csv`, `probes.csv`, `summary.csv`, `policies.csv` and `violations.csv`, in file order,',
    'and the field that holds it in `results.json`; the fields only `results.json` has come last in each table',
    '(its records list their fields in the order of the registry). **Kind** says how a value is written: `count` a whole',
    'number; `number` a number that may have decimals; `money` in USD, with 8',
    'decimals in the CSV files and as an exact string with 12 in `results.json`; `ratio` with 4 decimals, empty when',
    'undefined; `duration` in whole milliseconds; `list` separated by `;`. **Made from** says how a row is made from',
    'the rows below it (a turn from its model calls, a summary row from its turns, a policy row from its',
    'conversations); percentiles are nearest rank. How the figures are counted: [Cost model](cost-model.md),',
    '[Memory upkeep](upkeep.md), [Safety](safety.md), [Reports](reports.md).',
    '',
  ];
  for (const kind of kinds) {
    out.push(`## \`${kind.name}.csv\``, '', ROWS[kind.name] ?? '', '', ...table(kind, MADE_FROM[kind.name as keyof typeof MADE_FROM]), '');
  }
  return out.join('\n');
}

function table(kind: RecordKind, below: RecordKind | undefined): string[] {
  const only = kind.columns.filter((c) => c.csv === undefined);
  const rows = [...kind.csvSpecs, ...only].map((c) => [c.csv === undefined ? '—' : `\`${c.csv}\``, `\`${c.key}\``, kindText(c), madeFrom(c, below), c.doc].map(docsCell));
  return ['| column | results.json | kind | made from | what it is |', '|---|---|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

/** The kind, with its values when they are a fixed set, and `or null` / `optional`. */
function kindText(c: ColumnSpec): string {
  const values = c.values ? ` (${c.values.map((v) => `\`${v}\``).join(', ')})` : '';
  return `${c.kind}${values}${c.nullable ? ', or null' : ''}${c.optional ? ', optional' : ''}`;
}

const AGGREGATION: Record<ColumnSpec['agg'], string> = {
  sum: 'sum',
  max: 'max',
  p50: 'median',
  p95: '95th percentile',
  mean: 'mean',
  count: 'count',
  'weighted mean': 'weighted mean',
  none: '—',
};

/**
 * How the column is made: `sum of overflow`, `95th percentile of
 * latency_ms` (the columns of the rows below, by their CSV header), `sum`
 * (of the column of the same name), `count`, `—`.
 */
function madeFrom(c: ColumnSpec, below: RecordKind | undefined): string {
  const of = c.of === undefined ? [] : typeof c.of === 'string' ? [c.of] : c.of;
  const name = (key: string) => below?.columns.find((b) => b.key === key)?.csv ?? key;
  return `${AGGREGATION[c.agg]}${of.length ? ` of ${of.map((k) => `\`${name(k)}\``).join(' + ')}` : ''}`;
}

