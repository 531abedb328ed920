import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aggregate } from '../src/records/columns.js';
import { recordSchema } from '../src/records/schema.js';
import { csvHeader, csvRow } from '../src/records/csv.js';
import { columnsMarkdown } from '../src/records/docs.js';
import { DOCS_COMMAND } from '../src/text/markdown.js';
import { parseResultsJson } from '../src/records/json.js';
import { BASELINE_ORDER, MADE_FROM, POLICY_RECORD, PROBE_RECORD, RECORD_KINDS, SUMMARY_RECORD, TURN_RECORD, type SummaryRecord, type TurnRecord } from '../src/records/registry.js';
import { recordOf, turnRecord } from './_records.js';
import { ROOT } from './_shared.js';

/**
 * The record registries: each column declared once, from which the CSV
 * files, results.json, the sums and docs/columns.md follow.
 */

const turn = turnRecord({
  scenario: 's',
  policy: 'full',
  turn: 2,
  contextMessages: 3,
  model: 'gpt-4o-mini',
  inputTokens: 120,
  cachedTokens: 64,
  outputTokens: 10,
  embedTokens: 5,
  cost: 13_500_000n,
  cumulativeCost: 20_000_000n,
  latencyMs: 412,
  overBudget: true,
  probes: 2,
  retained: 1,
  costInput: 9_000_000n,
  costCached: 1_500_000n,
  costOutput: 3_000_000n,
  calls: 1,
});

describe('the record registries', () => {
  it('give every column a key, a doc line and, in the CSV file, a header of its own', () => {
    for (const kind of RECORD_KINDS) {
      const keys = kind.columns.map((c) => c.key);
      expect(new Set(keys).size, kind.name).toBe(keys.length);
      const headers = kind.csvSpecs.map((c) => c.csv);
      expect(new Set(headers).size, kind.name).toBe(headers.length);
      expect(kind.csvSpecs.length, kind.name).toBe(kind.columns.filter((c) => c.csv !== undefined).length);
      for (const c of kind.columns) {
        expect(c.doc.trim().length, `${kind.name}.${c.key}`).toBeGreaterThan(10);
        expect(c.doc, `${kind.name}.${c.key}: one line`).not.toMatch(/\n/);
        // Money is found by its kind; its CSV header says the unit.
        if (c.kind === 'money' && c.csv !== undefined) expect(c.csv, `${kind.name}.${c.key}`).toMatch(/_usd$/);
      }
    }
  });

  it('make each sum, max, percentile and mean of the columns of the kind below', () => {
    for (const [name, below] of Object.entries(MADE_FROM)) {
      const kind = RECORD_KINDS.find((k) => k.name === name)!;
      const belowKeys = new Set<string>(below.columns.map((c) => c.key));
      for (const c of kind.columns) {
        const of = c.of === undefined ? [c.key] : typeof c.of === 'string' ? [c.of] : c.of;
        if (['sum', 'max', 'p50', 'p95', 'mean'].includes(c.agg)) for (const k of of) expect(belowKeys.has(k), `${name}.${c.key} of ${k}`).toBe(true);
        else expect(c.of, `${name}.${c.key}: \`of\` only where aggregate computes it`).toBeUndefined();
      }
    }
  });

  it('type a scenario’s weight as a number that may have decimals, not a count: a summary record read back with weight 0.5 is valid, as a study may give it', () => {
    const schema = recordSchema(SUMMARY_RECORD, z.bigint());
    const half = recordOf(SUMMARY_RECORD, { weight: 0.5, model: 'gpt-4o-mini' });
    expect(schema.safeParse(half).success).toBe(true);
    // A count stays a whole number.
    expect(schema.safeParse({ ...half, turns: 0.5 }).success).toBe(false);
    // And the docs say which it is.
    expect(columnsMarkdown()).toContain('| `weight` | `weight` | number | — |');
  });

  it('name the baseline columns in BASELINE_ORDER, summary columns each, one of them money (the cost, written as costMicroUsd)', () => {
    const kept = BASELINE_ORDER.map((k) => SUMMARY_RECORD.columns.find((c) => c.key === k));
    expect(kept.every((c) => c !== undefined)).toBe(true);
    expect(kept.filter((c) => c!.kind === 'money').map((c) => c!.key)).toEqual(['totalCost']);
  });
});

describe('the columns of each file: the one list a new column changes here', () => {
  it('keeps the order each CSV file has had, a new column last', () => {
    expect(Object.fromEntries(RECORD_KINDS.map((k) => [k.name, csvHeader(k.csv).trimEnd().split(',')]))).toEqual({
      turns: 'scenario,policy,turn,context_messages,input_tokens,cached_tokens,output_tokens,aux_input_tokens,aux_output_tokens,embed_tokens,cost_usd,cumulative_cost_usd,latency_ms,overflow,probes,retained,over_budget,model,fallback,cache_write_tokens,estimated_tokens,violations,zombie_prompt,injection_exposed,calls'.split(','),
      probes: 'scenario,policy,turn,fact,outcome,age_turns,source,expected,violation,model,answer,judged,judged_unsent'.split(','),
      summary:
        'scenario,policy,turns,input_tokens,cached_tokens,output_tokens,aux_tokens,total_cost_usd,cost_per_turn_usd,peak_input_tokens,overflow_turns,probes,retained,stale,missing,retention,first_lost_turn,over_budget_turns,latency_p50_ms,latency_p95_ms,zombie_artifacts,zombie_prompt_turns,injection_exposure_turns,violations,stored_bytes,zombies,zombie_probes,overflow_probes,weight,model,answered,answer_retention,memory,judged_unsent'.split(','),
      policies:
        'policy,scenarios,turns,input_tokens,cached_tokens,output_tokens,aux_tokens,total_cost_usd,cost_per_conversation_usd,cost_per_turn_usd,overflow_turns,probes,retained,stale,missing,retention,pareto,stored_bytes_mean,stored_bytes_p95,zombie_artifacts,zombie_prompt_turns,zombie_probes,injection_exposure_turns,violations,overflow_probes,latency_p95_ms,model,answered,answer_retention,memory,judged_unsent'.split(','),
      violations: 'scenario,policy,turn,rule,detail,call,model'.split(','),
    });
  });
});

describe('the records of test fixtures (test/_records.ts)', () => {
  it('have every column of their kind, in registry order, at the zero of its kind (the first of a text’s values) but what a test gives', () => {
    const zero = { count: 0, number: 0, money: 0n, ratio: 0, flag: false, duration: 0, text: '', list: [] };
    for (const kind of RECORD_KINDS) {
      const r = recordOf(kind) as Record<string, unknown>;
      const kept = kind.columns.filter((c) => !c.optional);
      expect(Object.keys(r), kind.name).toEqual(kept.map((c) => c.key));
      for (const c of kept) expect(r[c.key], `${kind.name}.${c.key}`).toEqual(c.nullable ? null : c.kind === 'text' && c.values ? c.values[0] : zero[c.kind]);
    }
    expect(recordOf(PROBE_RECORD, { fact: 'email', answer: 'answered' })).toMatchObject({ fact: 'email', outcome: 'retained', answer: 'answered' });
  });
});

describe('a turn record, written by its registry (hand-worked)', () => {
  it('is a turns.csv row in file order, money in USD with 8 decimals', () => {
    expect(csvHeader(TURN_RECORD.csv)).toBe(
      'scenario,policy,turn,context_messages,input_tokens,cached_tokens,output_tokens,aux_input_tokens,aux_output_tokens,embed_tokens,cost_usd,cumulative_cost_usd,latency_ms,overflow,probes,retained,over_budget,model,fallback,cache_write_tokens,estimated_tokens,violations,zombie_prompt,injection_exposed,calls\n',
    );
    expect(csvRow(TURN_RECORD.csv, turn)).toBe('s,full,2,3,120,64,10,0,0,5,0.00001350,0.00002000,412,false,2,1,true,gpt-4o-mini,false,0,false,0,false,false,1\n');
  });

  it('is a results.json record in registry order whatever the order of its fields, money as exact USD strings', () => {
    const json =
      '{"scenario":"s","policy":"full","turn":2,"contextMessages":3,"model":"gpt-4o-mini","fallback":false,"inputTokens":120,"cachedTokens":64,"cacheWriteTokens":0,"outputTokens":10,"auxInputTokens":0,"auxOutputTokens":0,"embedTokens":5,"cost":"0.000013500000","cumulativeCost":"0.000020000000","latencyMs":412,"overflow":false,"overBudget":true,"probes":2,"retained":1,"violations":0,"zombiePrompt":false,"injectionExposed":false,"costInput":"0.000009000000","costCached":"0.000001500000","costOutput":"0.000003000000","costUpkeep":"0.000000000000","estimatedTokens":false,"calls":1}';
    expect(TURN_RECORD.json(turn)).toBe(json);
    const reversed = Object.fromEntries(Object.entries(turn).reverse()) as TurnRecord;
    expect(TURN_RECORD.json(reversed)).toBe(json);
  });

  it('reads money back by kind: a field that is not money stays as written, whatever its name', () => {
    const doc = {
      schemaVersion: 1,
      meta: {},
      study: {},
      policies: [],
      summary: [],
      turns: [{ scenario: 's', cost: '0.000013500000', costNote: 'not money' }],
      probes: [],
    };
    const turns = parseResultsJson(JSON.stringify(doc), 'r.json').results.turns as unknown as Record<string, unknown>[];
    expect(turns).toEqual([{ scenario: 's', cost: 13_500_000n, costNote: 'not money' }]);
  });
});

describe('aggregate', () => {
  it("sums a conversation's turns into its summary columns, as the registry declares (hand-computed)", () => {
    const second: TurnRecord = { ...turn, turn: 3, inputTokens: 200, cachedTokens: 100, outputTokens: 7, auxInputTokens: 30, auxOutputTokens: 4, embedTokens: 0, cost: 7_000_000n, latencyMs: 900, overflow: true, overBudget: false, violations: 2, zombiePrompt: true };
    expect(aggregate(SUMMARY_RECORD, [turn, second])).toEqual({
      inputTokens: 320,
      cachedTokens: 164,
      outputTokens: 17,
      auxTokens: 5 + 30 + 4,
      totalCost: 20_500_000n,
      peakInputTokens: 200,
      overflowTurns: 1,
      overBudgetTurns: 1,
      // Nearest rank of [412, 900]: the 1st for p50 (ceil(0.5 × 2) = 1), the 2nd for p95.
      latencyP50Ms: 412,
      latencyP95Ms: 900,
      zombiePromptTurns: 1,
      injectionExposureTurns: 0,
      violations: 2,
    });
  });

  it('sums summary rows into a policy row; a nullable sum is null when no row has a value', () => {
    const row = (over: Partial<SummaryRecord>) => ({ turns: 3, inputTokens: 10, cachedTokens: 0, outputTokens: 2, auxTokens: 1, totalCost: 5n, overflowTurns: 0, probes: 2, retained: 1, stale: 1, missing: 0, overflowProbes: 0, storedBytes: 100, latencyP95Ms: 300, zombieArtifacts: 0, zombiePromptTurns: 0, zombieProbes: 0, injectionExposureTurns: 0, violations: 0, answered: null, ...over });
    const rows = [row({}), row({ turns: 4, totalCost: 7n, storedBytes: 301, latencyP95Ms: 500, retained: 2, stale: 0 })];
    const sums = aggregate(POLICY_RECORD, rows);
    expect(sums).toEqual({
      turns: 7,
      inputTokens: 20,
      cachedTokens: 0,
      outputTokens: 4,
      auxTokens: 2,
      totalCost: 12n,
      overflowTurns: 0,
      probes: 4,
      retained: 3,
      stale: 1,
      missing: 0,
      overflowProbes: 0,
      // (100 + 301) / 2 = 200.5, rounded.
      storedBytesMean: 201,
      storedBytesP95: 301,
      latencyP95Ms: 500,
      zombieArtifacts: 0,
      zombiePromptTurns: 0,
      zombieProbes: 0,
      injectionExposureTurns: 0,
      violations: 0,
      answered: null,
      judgedUnsent: null,
    });
    expect(aggregate(POLICY_RECORD, [row({ answered: 1 }), row({})]).answered).toBe(1);
    expect(aggregate(POLICY_RECORD, [row({ judgedUnsent: 2 }), row({ judgedUnsent: 0 })]).judgedUnsent).toBe(2);
  });

  it('takes the largest of a conversation of 200,000 turns (more than a spread of arguments holds)', () => {
    const turns = Array.from({ length: 200_000 }, (_, i) => ({ ...turn, turn: i + 1, inputTokens: i === 123_456 ? 9_999 : 10 }));
    expect(aggregate(SUMMARY_RECORD, turns).peakInputTokens).toBe(9_999);
  });
});

describe('docs/columns.md', () => {
  const committed = readFileSync(join(ROOT, 'docs/columns.md'), 'utf8');

  it(`is what the registries give now (regenerate with ${DOCS_COMMAND})`, () => {
    expect(committed).toBe(columnsMarkdown());
  });

  it('lists every column of every record file with its doc line, in file order', () => {
    for (const kind of RECORD_KINDS) {
      const section = committed.split(`## \`${kind.name}.csv\``)[1]!.split('\n## ')[0]!;
      const rows = section.split('\n').filter((l) => l.startsWith('| `') || l.startsWith('| —'));
      const expected = [...kind.csvSpecs, ...kind.columns.filter((c) => c.csv === undefined)];
      expect(rows.map((r) => r.split(' | ')[1])).toEqual(expected.map((c) => `\`${c.key}\``));
      expect(rows.map((r) => r.split(' | ')[0])).toEqual(expected.map((c) => (c.csv === undefined ? '| —' : `| \`${c.csv}\``)));
      for (const [i, c] of expected.entries()) expect(rows[i]!.endsWith(` | ${c.doc} |`), `${kind.name}.${c.key}`).toBe(true);
    }
    expect(committed).toContain("| `overflow_turns` | `overflowTurns` | count | sum of `overflow` | turns with a call (or an upkeep call) over its model's context window |");
    expect(committed).toContain('| `latency_p95_ms` | `latencyP95Ms` | duration | 95th percentile of `latency_ms` |');
  });

  it('and the tables of the other pages name only columns the files have', () => {
    const headers = new Map(RECORD_KINDS.map((k) => [`${k.name}.csv`, new Set(k.csvSpecs.map((c) => c.csv))]));
    let checked = 0;
    for (const page of ['docs/reports.md', 'docs/safety.md', 'docs/cost-model.md']) {
      const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
      for (let i = 0; i < lines.length; i++) {
        const header = lines[i]!;
        if (!header.startsWith('|') || !lines[i + 1]?.startsWith('|---')) continue;
        const at = header.split('|').findIndex((cellText) => /\bcolumn\b/.test(cellText));
        if (at < 0) continue;
        for (let j = i + 2; lines[j]?.startsWith('|'); j++) {
          const cells = lines[j]!.split('|');
          const files = [...`${header.split('|')[at]} ${cells.slice(0, at + 1).join(' ')}`.matchAll(/`(\w+\.csv)`/g)].map((m) => m[1]!);
          if (!files.length) continue;
          const names = [...cells[at]!.matchAll(/`([^`]+)`/g)].flatMap((m) => (m[1]!.endsWith('.csv') ? [] : m[1]!.match(/[a-z][a-z0-9_]*/g)!));
          for (const file of files) {
            for (const name of names) {
              expect(headers.get(file)?.has(name), `${page}:${j + 1}: ${file} ${name}`).toBe(true);
              checked++;
            }
          }
        }
      }
    }
    // reports.md's "What each row measured", safety.md's forgetting columns, cost-model.md's usage accounting.
    expect(checked).toBeGreaterThan(15);
  });
});
