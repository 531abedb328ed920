import { describe, expect, it } from 'vitest';
import { BUDGET_COLUMN_NAMES, budgetColumnsProblem, budgetCsv, budgetDisplay, budgetTable } from '../src/report/budget.js';
import { digestOf } from '../src/records/digest.js';
import { terminalColumns } from '../src/text/columns.js';
import { POLICY_RECORD } from '../src/records/registry.js';
import { textWidth } from '../src/report/font.js';
import type { ReportInfo } from '../src/records/info.js';
import { budgetMarkdown, markdownTable, markdownText, reportMarkdown } from '../src/report/markdown.js';
import type { TurnRecord } from '../src/records/registry.js';
import { probe, resultsOf, turn } from './fixtures/report/records.js';

/**
 * Two conversations: a (6 turns) and b (2 turns), three policies p, q, r.
 * Every figure below is worked by hand in the comments.
 */
function rows(): TurnRecord[] {
  const out: TurnRecord[] = [];
  const add = (scenario: string, policy: string, n: number, f: (i: number) => Partial<TurnRecord>) => {
    for (let i = 1; i <= n; i++) out.push(turn({ scenario, policy, turn: i, ...f(i) }));
  };
  // p: a sends 100·i tokens and costs 2,469,135,780 pico at turn 1; turn 6 overflows. b sends 50, 150 and costs 4 pico.
  add('a', 'p', 6, (i) => ({ inputTokens: 100 * i, costInput: i === 1 ? 2_469_135_780n : 0n, overflow: i === 6 }));
  // q: a sends 10 a turn and costs 600,000,000 pico; b sends 11 a turn and its output costs 400,000,001 pico; b's turn 2 makes 7 upkeep tokens.
  add('a', 'q', 6, (i) => ({ inputTokens: 10, costInput: i === 1 ? 600_000_000n : 0n }));
  // r: huge numbers, for the thousands separators.
  add('a', 'r', 6, (i) => ({ inputTokens: 1_234_567, costInput: i === 1 ? 2_345_678_901_234_567_890n : 0n }));
  add('b', 'p', 2, (i) => ({ inputTokens: i === 1 ? 50 : 150, costInput: i === 1 ? 4n : 0n }));
  add('b', 'q', 2, (i) => ({ inputTokens: 11, costOutput: i === 2 ? 400_000_001n : 0n, auxInputTokens: i === 2 ? 7 : 0 }));
  add('b', 'r', 2, () => ({ inputTokens: 1_234_567 }));
  return out;
}

const results = resultsOf(rows(), [
  probe({ scenario: 'a', policy: 'p', turn: 3, outcome: 'retained' }),
  probe({ scenario: 'a', policy: 'p', turn: 5, outcome: 'missing' }),
  probe({ scenario: 'b', policy: 'p', turn: 2, outcome: 'retained' }),
  // Turn 6 of a went over the context window: its probe is an overflow, not retained.
  probe({ scenario: 'a', policy: 'p', turn: 6, outcome: 'overflow' }),
]);

const info: ReportInfo = {
  studyFile: null,
  seed: 1,
  model: 'gpt-4o-mini',
  tokenizer: 'auto',
  encoding: 'o200k_base',
  encodingEstimate: false,
  prices: 'builtin',
  priceDate: '2026-02-03',
  cache: 'auto',
  maxInputTokens: 128000,
  models: [{ model: 'gpt-4o-mini', encoding: 'o200k_base', encodingEstimate: false, maxInputTokens: 128000 }],
  scenarios: [],
  policies: [],
};

describe('budget table', () => {
  it('shows turns 1 and 5 only: no conversation reaches turn 10', () => {
    expect(budgetTable(results).turns).toEqual([1, 5]);
  });

  it('averages tokens over the conversations that reach the turn, and costs exactly', () => {
    const t = budgetTable(results);
    // p @1: (100 + 50) / 2 = 75; @5: only a reaches it = 500.
    // q @1: (10 + 11) / 2 = 10.5 → 11 (half up); @5 = 10.
    expect(t.rows.map((r) => [r.policy, ...r.tokensAt])).toEqual([
      ['p', 75, 500],
      ['q', 11, 10],
      ['r', 1_234_567, 1_234_567],
    ]);
    // p: (2,469,135,780 + 4) / 2 = 1,234,567,892; per 1,000: 2,469,135,784,000 / 2.
    // q: 1,000,000,001 / 2 = 500,000,000.5 → 500,000,001 (rounded once, half up); per 1,000: 500,000,000,500.
    expect(t.rows.map((r) => [r.costPerConversation, r.costPer1000])).toEqual([
      [1_234_567_892n, 1_234_567_892_000n],
      [500_000_001n, 500_000_000_500n],
      [1_172_839_450_617_283_945n, 1_172_839_450_617_283_945_000n],
    ]);
    expect(t.rows.map((r) => [r.retained, r.probes, r.overflowTurns, r.overflowProbes])).toEqual([
      [2, 4, 1, 1],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ]);
  });

  it('formats for people: separators, one money precision per column, retention with counts (overflowed probes named)', () => {
    // Per conversation: the smallest (500,000,001 pico = $0.000500000001) needs 6 decimals for 3 significant digits.
    // Per 1,000: the smallest ($0.5000000005) needs 3.
    // Cheapest first; pareto from the records (q and p: neither is both cheaper and retains more; r is dearer than both); q's 7 upkeep tokens over 2 conversations: 3.5 → 4.
    expect(budgetDisplay(results).rows).toEqual([
      ['q', '11', '10', '$0.000500', '$0.500', '-', 'yes', '4', '0'],
      ['p', '75', '500', '$0.001235', '$1.235', '50.0% (2/4, 1 overflowed)', 'yes', '0', '1'],
      ['r', '1,234,567', '1,234,567', '$1,172,839.450617', '$1,172,839,450.617', '-', '-', '0', '0'],
    ]);
  });

  it('prints paste-ready markdown: a caption line, a blank line, a padded table', () => {
    expect(budgetMarkdown(results, info)).toBe(
      [
        // Only a (6 turns) reaches turn 5: its column is one conversation's.
        'gpt-4o-mini · prices of 2026-02-03 · tokenizer o200k_base · 2 conversations · tokens: mean sent at that turn by the conversations that reach it (turn 5: 1)',
        '',
        '| policy | tokens @ turn 1 | tokens @ turn 5 | cost / conversation | cost / 1,000 conversations |                 retention | pareto | upkeep tokens / conversation | overflows |',
        '| ------ | --------------: | --------------: | ------------------: | -------------------------: | ------------------------: | ------ | ---------------------------: | --------: |',
        '| q      |              11 |              10 |           $0.000500 |                     $0.500 |                         - | yes    |                            4 |         0 |',
        '| p      |              75 |             500 |           $0.001235 |                     $1.235 | 50.0% (2/4, 1 overflowed) | yes    |                            0 |         1 |',
        '| r      |       1,234,567 |       1,234,567 |   $1,172,839.450617 |         $1,172,839,450.617 |                         - | -      |                            0 |         0 |',
        '',
      ].join('\n'),
    );
  });

  it('writes CSV with plain numbers', () => {
    expect(budgetCsv(results)).toBe(
      [
        'policy,tokens_turn_1,tokens_turn_5,cost_per_conversation_usd,cost_per_1000_conversations_usd,probes,retained,retention,overflow_turns,scenarios,overflow_probes,model,upkeep_tokens_per_conversation,pareto',
        'p,75,500,0.00123457,1.2346,4,2,0.5000,1,2,1,gpt-4o-mini,0,true',
        'q,11,10,0.00050000,0.5000,0,0,,0,2,0,gpt-4o-mini,4,true',
        'r,1234567,1234567,1172839.45061728,1172839450.6173,0,0,,0,2,0,gpt-4o-mini,0,false',
        '',
      ].join('\n'),
    );
  });
});

describe('budget table columns (ctxsim table --columns, a study’s budgetColumns)', () => {
  it('shows the columns named, in that order, any column of policies.csv too; sorts as told', () => {
    const t = budgetDisplay(results, { columns: ['retention', 'policy', 'tokens_turn_10', 'input_tokens', 'latency_p95_ms', 'memory', 'total_cost_usd'], sort: 'name' });
    expect(t.header).toEqual(['retention', 'policy', 'tokens @ turn 10', 'input tokens', 'latency p95', 'memory', 'total cost']);
    // No conversation reaches turn 10: `-`. p sent 100 + … + 600 + 50 + 150 = 2,300 tokens; money with one precision per column.
    expect(t.rows).toEqual([
      ['50.0% (2/4, 1 overflowed)', 'p', '-', '2,300', '0 ms', 'none', '$0.00247'],
      ['-', 'q', '-', '82', '0 ms', 'none', '$0.00100'],
      ['-', 'r', '-', '9,876,536', '0 ms', 'none', '$2,345,678.90123'],
    ]);
    expect([...t.numeric].sort()).toEqual([0, 2, 3, 4, 6]);
    expect(budgetCsv(results, { columns: ['policy', 'vs_full', 'retention', 'input_tokens', 'total_cost_usd'], sort: 'retention' })).toBe(
      ['policy,vs_full,retention,input_tokens,total_cost_usd', 'p,,0.5000,2300,0.00246914', 'q,,,82,0.00100000', 'r,,,9876536,2345678.90123457', ''].join('\n'),
    );
  });

  it('writes a turn no conversation reaches as an empty CSV cell, as every absent number is', () => {
    expect(budgetCsv(results, { columns: ['policy', 'tokens_turn_5', 'tokens_turn_10'] })).toBe(['policy,tokens_turn_5,tokens_turn_10', 'p,500,', 'q,10,', 'r,1234567,', ''].join('\n'));
  });

  it('vs full: each row against full on its model (by hand: 1 − 0.5 / 1.235 = 59.5% less)', () => {
    const withFull = { ...results, policies: results.policies.map((p) => (p.policy === 'p' ? { ...p, policy: 'full' } : p)) };
    const t = budgetDisplay({ ...withFull, digest: digestOf(results) }, { columns: ['policy', 'vs_full'] });
    expect(t.rows).toEqual([['q', '-59.5%'], ['full', '0.0%'], ['r', '+94,999,996,110.6%']]);
  });

  it('names an unknown column with the nearest one, and a column listed twice', () => {
    expect(budgetColumnsProblem(['policy', 'retension'])).toEqual({ index: 1, message: 'no budget table column "retension" (did you mean retention?); the columns are listed in ctxsim table --help' });
    expect(budgetColumnsProblem(['policy', 'cost'])).toEqual({ index: 1, message: 'no budget table column "cost"; the columns are listed in ctxsim table --help' });
    expect(budgetColumnsProblem(['policy', 'retention', 'policy'])).toEqual({ index: 2, message: 'column policy is listed twice' });
    expect(budgetColumnsProblem(['policy', 'vs_full'])).toBeUndefined();
    expect(() => budgetCsv(results, { columns: ['polcy'] })).toThrow('--columns: no budget table column "polcy" (did you mean policy?)');
    // Every name is listed: the budget CSV's, vs_full, then the other columns of policies.csv.
    expect(BUDGET_COLUMN_NAMES.slice(0, 8)).toEqual(['policy', 'model', 'tokens_turn_1', 'tokens_turn_5', 'tokens_turn_10', 'tokens_turn_20', 'tokens_turn_50', 'cost_per_conversation_usd']);
    for (const c of POLICY_RECORD.csvSpecs) expect(BUDGET_COLUMN_NAMES, c.csv).toContain(c.csv);
  });

  it('by default in ctxsim table (narrow): policy, cost per 1,000, retention, vs full when the run has full, pareto — no tokens in the caption', () => {
    expect(budgetDisplay(results, { narrow: true }).header).toEqual(['policy', 'cost / 1,000 conversations', 'retention', 'pareto']);
    expect(budgetMarkdown(results, info, { narrow: true }).split('\n')[0]).toBe('gpt-4o-mini · prices of 2026-02-03 · tokenizer o200k_base · 2 conversations');
  });
});

describe('the budget table ctxsim table prints by default', () => {
  /**
   * GitHub renders a markdown table in its 16-px font, bold headers, 13 px
   * of padding each side of a cell and a 1-px border: the table's width is
   * the sum over its columns of the widest text plus 27 px, plus 1. DejaVu
   * Sans (the charts' font) is wider than GitHub's system fonts, so a table
   * that fits by its widths fits on the page.
   */
  const renderedWidth = (t: { header: string[]; rows: string[][] }) =>
    t.header.reduce((sum, h, i) => sum + Math.max(textWidth(h, 16, true), ...t.rows.map((r) => textWidth(r[i]!, 16))) + 27, 1);

  /** Policy rows on each of `models`: `names` in order, each 10% cheaper than the one before, retaining 11 probes fewer of `probes`. */
  function rows(models: readonly string[], names: readonly string[], probes: number) {
    const template = resultsOf([turn({ scenario: 'a', policy: 'full', turn: 1 })]).policies[0]!;
    return models.flatMap((model, m) =>
      names.map((policy, i) => ({
        ...template,
        policy,
        model,
        scenarios: 33,
        totalCost: BigInt(33 * (m + 1) * (1000 - 100 * i)) * 10n ** 9n,
        probes,
        retained: probes - 11 * i,
        retention: (probes - 11 * i) / probes,
        pareto: i % 2 === 0,
      })),
    );
  }

  it('fits GitHub’s 980-px content width: two models with the default policies, thousands of probes; one model with sweep names', () => {
    const two = rows(['gpt-4o-mini', 'claude-haiku-4-5'], ['full', 'summary-buffer', 'window-tokens', 'facts', 'retrieval', 'mask-observations'], 1079);
    const t = budgetDisplay({ policies: two, turns: [], probes: [] }, { narrow: true });
    expect(t.header).toEqual(['policy', 'model', 'cost / 1,000 conversations', 'retention', 'vs full', 'pareto']);
    expect(t.rows[0]).toEqual(['mask-observations', 'gpt-4o-mini', '$500.00', '94.9% (1,024/1,079)', '-50.0%', '-']);
    expect(renderedWidth(t)).toBeLessThanOrEqual(980);
    const sweep = rows(['gpt-4o-mini'], ['full', 'window-tokens:budget=2000', 'summary-buffer:keepRecent=4', 'retrieval:topK=8'], 79);
    expect(renderedWidth(budgetDisplay({ policies: sweep, turns: [], probes: [] }, { narrow: true }))).toBeLessThanOrEqual(980);
    // The table report.md has by default does not fit: what --columns is for.
    expect(renderedWidth(budgetDisplay({ policies: two, turns: [], probes: [] }))).toBeGreaterThan(980);
  });
});

describe('markdown tables', () => {
  it('pad by the columns a terminal draws, as the run table does (ctxsim table prints them): a CJK name or an emoji takes two a character, an accent written apart none', () => {
    const names = ['窓口-日本語', 'summary-🙂', 'cafe\u0301', 'full'];
    const text = markdownTable(['policy', 'cost'], names.map((n, i) => [n, `$${i}.00`]), new Set([1]));
    const widths = text.trimEnd().split('\n').map(terminalColumns);
    expect(new Set(widths).size, text).toBe(1);
    expect(text.split('\n')[2]).toBe('| 窓口-日本語 | $0.00 |');
  });

  it('escape pipes and right-align numeric columns', () => {
    expect(markdownTable(['a', 'n'], [['x|y', '5']], new Set([1]))).toBe('| a    |   n |\n| ---- | --: |\n| x\\|y |   5 |\n');
  });

  it('write a model a study names as text: no emphasis, code, link or HTML made of it', () => {
    const named = { ...info, model: '<img src=x onerror=alert(1)>*bold*_[link](u)`', models: [{ ...info.models[0]!, model: '<img src=x onerror=alert(1)>*bold*_[link](u)`' }] };
    const caption = budgetMarkdown(results, named).split('\n')[0]!;
    expect(caption.startsWith('\\<img src=x onerror=alert(1)\\>\\*bold\\*\\_\\[link\\](u)\\` · prices of 2026-02-03 · tokenizer o200k_base · ')).toBe(true);
    // A `_` inside a word is a letter to GitHub: left as it is.
    expect(markdownText('o200k_base _x_ a_b')).toBe('o200k_base \\_x\\_ a_b');
  });

  it('write a model or policy a study names as text in the table too, as in the caption', () => {
    const name = '<i>my*model*</i>';
    const named = { ...info, model: name, models: [{ ...info.models[0]!, model: name }] };
    const table = budgetMarkdown({ ...results, policies: results.policies.map((p) => ({ ...p, model: name, policy: `${p.policy}:mode=[x](u)` })) }, named, { columns: ['policy', 'model', 'pareto'] });
    const row = table.split('\n').find((l) => l.startsWith('| p:'));
    expect(row).toBe('| p:mode=\\[x\\](u) | \\<i\\>my\\*model\\*\\</i\\> | yes    |');
  });
});

describe('report.md, rows in the study’s budgetSort', () => {
  // Three policies whose order by cost (c, b, a) is not their order by name; every turn makes two calls, so report.md has the model-call table.
  const three = resultsOf(['a', 'b', 'c'].map((policy, i) => turn({ scenario: 's', policy, turn: 1, calls: 2, costInput: BigInt(3 - i) * 1_000_000n })));
  /** The policies of a section's table of report.md, top to bottom. */
  const order = (md: string, heading: string) =>
    md
      .split(`## ${heading}\n`)[1]!
      .split('\n## ')[0]!
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| policy') && !l.startsWith('| -'))
      .map((l) => l.slice(2).split(' ')[0]);

  it('orders the latency, storage and safety table and the model-call table as the budget table', () => {
    for (const [sort, policies] of [['name', ['a', 'b', 'c']], ['cost', ['c', 'b', 'a']], [undefined, ['c', 'b', 'a']]] as const) {
      const md = reportMarkdown(three, { ...info, ...(sort && { budgetSort: sort }) });
      expect(order(md, 'Budget per policy'), sort).toEqual(policies);
      expect(order(md, 'Latency, storage and safety per policy'), sort).toEqual(policies);
      expect(order(md, 'Model calls per policy'), sort).toEqual(policies);
    }
  });
});

describe('the latency, storage and safety table', () => {
  it('says how its latency p95 is made, as latency_p95_ms is: each conversation’s 95th-percentile turn, then the 95th percentile of those (not of every turn)', () => {
    // s1: nineteen turns of 100 ms and one of 2,000 (its p95: 100 ms); s2: one turn of 1,000 ms. Over every turn the p95 is 1,000 ms; over the conversations' p95s (100, 1,000) it is 1,000 too, so a third: s3, 3,000 ms.
    const turns = [
      ...Array.from({ length: 20 }, (_, i) => turn({ scenario: 's1', policy: 'p', turn: i + 1, latencyMs: i === 19 ? 2_000 : 100 })),
      turn({ scenario: 's2', policy: 'p', turn: 1, latencyMs: 1_000 }),
      turn({ scenario: 's3', policy: 'p', turn: 1, latencyMs: 3_000 }),
    ];
    const md = reportMarkdown(resultsOf(turns), info);
    const section = md.split('## Latency, storage and safety per policy\n')[1]!.split('\n## ')[0]!;
    // The records: the policy's latency_p95_ms is 3,000 (p95 of 100, 1,000, 3,000); over all 22 turns it would be 2,000.
    expect(section).toMatch(/\| p +\| +3,000 ms \|/);
    expect(section).toContain("latency: the time until a turn's reply is complete, its 95th percentile in each conversation, then the 95th percentile of those over the conversations");
  });
});
