import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { policyTable, runSummary } from '../src/report/text.js';
import { verdict } from '../src/report/verdict.js';
import { terminalColumns } from '../src/text/columns.js';
import type { ModelInfo } from '../src/records/info.js';
import type { PolicyRecord } from '../src/records/registry.js';
import { capture } from './_io.js';
import { policyRecord } from './_records.js';
import { tempDir } from './_tmp.js';

/** A policy row with the figures the table and the verdict read: cost in pico-dollars for all `scenarios`, retention `retained/probes`. */
function row(policy: string, totalCost: bigint, retained: number, more: Partial<PolicyRecord> = {}): PolicyRecord {
  const probes = more.probes ?? 10;
  const scenarios = more.scenarios ?? 10;
  return policyRecord({
    policy,
    model: 'gpt-4o-mini',
    scenarios,
    turns: 100,
    inputTokens: 50_000,
    cachedTokens: 1_000,
    outputTokens: 2_000,
    totalCost,
    costPerConversation: totalCost / BigInt(scenarios),
    costPerTurn: totalCost / 100n,
    probes,
    retained,
    missing: probes - retained,
    retention: probes ? retained / probes : null,
    latencyP95Ms: 1_234,
    ...more,
  });
}

const MODELS: ModelInfo[] = [{ model: 'gpt-4o-mini', encoding: 'o200k_base', encodingEstimate: false, maxInputTokens: 128_000 }];
const INFO = { models: MODELS, priceDate: '2026-03-11' };

// Ten conversations each: per 1,000 conversations = total × 100. full $0.06 → $6.00 per 1,000; window $0.02 → $2.00; summary $0.045 → $4.50; facts $0.048 → $4.80.
const USD = 1_000_000_000_000n;
const RUN = [
  row('full', (6n * USD) / 100n, 10, { pareto: true }),
  row('window', (2n * USD) / 100n, 3, { pareto: true }),
  row('summary', (45n * USD) / 1000n, 9, { pareto: true, memory: 'simulated', auxTokens: 4_000 }),
  row('facts', (48n * USD) / 1000n, 10, { pareto: true, memory: 'simulated', auxTokens: 9_000 }),
];

/** The evidence sentence of RUN: which retention, over how many conversations, and the frontier. */
const EVIDENCE =
  'On 10 conversations, with simulated retention (a fact counts when its value is in what is sent), the Pareto frontier of cost and retention is ' +
  'window ($2.00 per 1,000 conversations, 30%), summary ($4.50, 90%), facts ($4.80, 100%) and full ($6.00, 100%).';

describe('the verdict', () => {
  it('leads with the pick and its saving against full (by hand: 4.80 / 6.00 = 20% less), then names the frontier cheapest first', () => {
    expect(verdict(RUN, {})).toBe(`Use facts: it keeps 100% of probed facts for 20% less than full, $4.80 against $6.00 per 1,000 conversations. ${EVIDENCE}`);
  });

  it('takes another threshold: at 90% summary qualifies (4.50 / 6.00 = 25% less)', () => {
    expect(verdict(RUN, { minRetention: 0.9 })).toMatch(/^Use summary: it keeps 90% of probed facts for 25% less than full, \$4\.50 against \$6\.00 per 1,000 conversations\. On /);
  });

  it('says when no policy reaches the threshold, and which keeps the most', () => {
    const low = [row('window', 2n * USD, 3, { pareto: true }), row('window-tokens', 3n * USD, 6, { pareto: true })];
    expect(verdict(low, {})).toMatch(/^No policy keeps 95% of probed facts; the most is window-tokens, 60% at \$300\.00 per 1,000 conversations\. On /);
  });

  it('says when full itself is the cheapest that qualifies, and which cheaper policy comes closest; a policy dearer than full is not it', () => {
    const dear = [row('full', 6n * USD, 10, { pareto: true }), row('summary-buffer', 7n * USD, 10), row('window', USD, 2, { pareto: true }), row('window-turns', 2n * USD, 2)];
    // window and window-turns keep 20% each: the cheaper comes closest.
    expect(verdict(dear, {})).toMatch(/^Use full: no cheaper policy keeps at least 95% of probed facts; window comes closest, 20% for 83% less than full \(\$100\.00 against \$600\.00 per 1,000 conversations\)\. On /);
    expect(verdict(dear, { minRetention: 0 })).toMatch(/^Use window: it keeps 20% of probed facts for 83% less than full, \$100\.00 against \$600\.00 per 1,000 conversations\. /);
    // Nothing cheaper than full: nothing comes closest.
    expect(verdict([row('full', 6n * USD, 10), row('summary-buffer', 7n * USD, 10)], {})).toMatch(/^Use full: no cheaper policy keeps at least 95% of probed facts\. On /);
  });

  it('compares with full even when full does not keep the threshold (its calls overflowed), and says so', () => {
    const over = [row('full', 6n * USD, 8, { pareto: true, overflowProbes: 2 }), row('facts', 7n * USD, 10, { pareto: true })];
    expect(verdict(over, {})).toMatch(/^Use facts: it keeps 100% of probed facts for 17% more than full, which keeps only 80%, \$700\.00 against \$600\.00 per 1,000 conversations\. /);
  });

  it('without full, names the pick and its cost alone', () => {
    expect(verdict(RUN.filter((r) => r.policy !== 'full'), {})).toMatch(/^Use facts: it keeps 100% of probed facts at \$4\.80 per 1,000 conversations \(the run has no full to compare it with\)\. On /);
  });

  describe('materiality: a pick that saves less than minSaving (default 5%) does not pay', () => {
    // facts costs $5.80 per 1,000 against full's $6.00: 3.3% less. Three conversations of 5, 20 and 40 turns: full $1, $2, $3; facts $1.20, $1.90, $2.70.
    const per = (usd: number) => BigInt(Math.round(usd * 100)) * (USD / 100n);
    const three = { scenarios: 3, turns: 65 };
    const rows = [row('full', per(6), 10, { ...three, pareto: true }), row('facts', per(5.8), 10, { ...three, pareto: true, memory: 'simulated' }), row('window', per(2), 3, { ...three, pareto: true })];
    const scenario = (id: string, turns: number, full: number, facts: number, weight = 1) => [
      { scenario: id, policy: 'full', model: 'gpt-4o-mini', turns, totalCost: per(full), weight },
      { scenario: id, policy: 'facts', model: 'gpt-4o-mini', turns, totalCost: per(facts), weight },
    ];
    const scenarios = [...scenario('a', 5, 1, 1.2), ...scenario('b', 20, 2, 1.9), ...scenario('c', 40, 3, 2.7)];
    const lead =
      'Use full: no memory policy pays off at this length (21.7 turns a conversation on average): facts, the cheapest that keeps at least 95% of probed facts, saves only 3.3% against full ($1,933.33 against $2,000.00 per 1,000 conversations), under the 5% threshold.';

    it('recommends full, says what the pick saves and that it is under the threshold', () => {
      expect(verdict(rows, {})).toMatch(new RegExp(`^${lead.replace(/[$().]/g, '\\$&')} On 3 conversations,`));
    });

    it('names the shortest length from which the run’s conversations make it pay (by hand: from 20 turns, 1 − 4.60 / 5.00 = 8%)', () => {
      expect(verdict(rows, {}, scenarios)).toContain(`${lead} It saves 8% on the 2 conversations of 20 turns or more: it would pay on conversations that long. On 3`);
      // At 9%, only the 40-turn one: 1 − 2.70 / 3.00 = 10%.
      expect(verdict(rows, { minSaving: 0.09 }, scenarios)).toContain('It saves 10% on the one conversation of 40 turns or more: it would pay on conversations that long.');
      // Weights count: b weighs 2, so from 20 turns 1 − (2 × 1.90 + 2.70) / (2 × 2 + 3) = 7.1%.
      const weighted = [...scenario('a', 5, 1, 1.2), ...scenario('b', 20, 2, 1.9, 2), ...scenario('c', 40, 3, 2.7)];
      expect(verdict(rows, {}, weighted)).toContain('It saves 7.1% on the 2 conversations of 20 turns or more');
      // And the mean length is weighted as the costs are: (5 + 2 × 20 + 40) / 4 = 21.25 turns, where each conversation once says 21.7.
      expect(verdict(rows, {}, weighted)).toContain('no memory policy pays off at this length (21.3 turns a conversation on average)');
    });

    it('says when no length of the run makes it pay', () => {
      expect(verdict(rows, { minSaving: 0.2 }, scenarios)).toContain('under the 20% threshold. It saves less than 20% at every length this run has (10% on the longest, 40 turns). On 3');
    });

    it('a saving under the threshold never reads as the threshold: it gets the decimals that tell them apart', () => {
      // 1 − 5.66 / 6.00 = 5.667%, which one decimal writes 5.7%: under a 5.7% threshold it is 5.67%.
      const near = rows.map((r) => (r.policy === 'facts' ? { ...r, totalCost: per(5.66) } : r));
      expect(verdict(near, { minSaving: 0.057 })).toContain('saves only 5.67% against full ($1,886.67 against $2,000.00 per 1,000 conversations), under the 5.7% threshold.');
      expect(verdict(near, { minSaving: 0.058 })).toContain('saves only 5.7% against full');
      // From 20 turns facts saves 8%: under an 8.1% threshold that is not the length that pays, the 40-turn one is.
      expect(verdict(rows, { minSaving: 0.081 }, scenarios)).toContain('It saves 10% on the one conversation of 40 turns or more');
    });

    it('a saving at the threshold pays; minSaving 0 takes any saving', () => {
      const atFive = rows.map((r) => (r.policy === 'facts' ? { ...r, totalCost: per(5.7) } : r));
      expect(verdict(atFive, {})).toMatch(/^Use facts: it keeps 100% of probed facts for 5% less than full, \$1,900\.00 against \$2,000\.00 per 1,000 conversations\. /);
      expect(verdict(rows, { minSaving: 0 })).toMatch(/^Use facts: it keeps 100% of probed facts for 3\.3% less than full, /);
    });
  });

  it('says which retention it is: plain, recorded, answered (then the frontier and the pick are by answers)', () => {
    const plain = RUN.map((r) => ({ ...r, memory: 'none' as const }));
    expect(verdict(plain, {})).toContain(' On 10 conversations, with retention (a fact counts when its value is in what is sent),');
    const recorded = RUN.map((r) => ({ ...r, memory: r.memory === 'simulated' ? ('recorded' as const) : r.memory }));
    expect(verdict(recorded, {})).toMatch(/with retention from recorded upkeep/);
    // Answers: facts' reply held only 8 of 10, full's all: full is the cheapest at 95% of answers; the frontier is of answers.
    const answered = RUN.map((r) => ({ ...r, answered: r.policy === 'facts' ? 8 : r.retained, answerRetention: (r.policy === 'facts' ? 8 : r.retained) / 10 }));
    const text = verdict(answered, {});
    expect(text).toMatch(/with answered retention \(a real model’s reply to the probe held the fact\), the Pareto frontier of cost and answered retention is window \(\$2\.00 per 1,000 conversations, 30%\), summary \(\$4\.50, 90%\) and full \(\$6\.00, 100%\)\./);
    expect(text).toMatch(/^Use full: no cheaper policy keeps at least 95% of probed facts in its answers; summary comes closest, 90% for 25% less than full/);
  });

  it('warns, last, of a judge’s yeses on values never sent, whether or not a policy reaches the threshold; says nothing of none', () => {
    // window retained 3 of 10 and the judge said yes on 6 of its 7 others; summary 1 of its 1; they stay unanswered.
    const judged = RUN.map((r) => ({ ...r, answered: r.retained, answerRetention: r.retained / 10, judgedUnsent: r.policy === 'window' ? 6 : r.policy === 'summary' ? 1 : 0 }));
    const warning = ' Warning: the judge said yes on 7 of the 8 probes whose value was never sent (judged_unsent); they count as unanswered, since no memory sent the value, and the judge’s other yeses are worth checking before these figures are trusted.';
    const text = verdict(judged, {});
    // With answers, full keeps no more than facts and costs more: the frontier ends at facts.
    expect(text.endsWith(`and facts ($4.80, 100%).${warning}`), text).toBe(true);
    expect(verdict(judged, { minRetention: 1.01 }).endsWith(`and facts ($4.80, 100%).${warning}`)).toBe(true);
    expect(verdict(judged.map((r) => ({ ...r, judgedUnsent: 0 })), {})).not.toContain('Warning');
    // A judge needs answers: without them the figures are retention, and the verdict says nothing of it.
    expect(verdict(judged.map((r) => ({ ...r, answered: null, answerRetention: null })), {})).not.toContain('Warning');
    // The line under the table names the judge and each policy's count.
    const info = { ...INFO, upkeep: { recorded: 'upkeep.cassette.jsonl', answers: true as const, judge: 'gpt-4o' } };
    expect(policyTable({ policies: judged }, info, { wide: true }).trimEnd().split('\n').at(-1)).toBe(
      'Judged unsent: the judge gpt-4o said yes on 7 of the 8 probes whose value was not sent (6 under window, 1 under summary); a yes counts as answered only when the prompt held the value, so these count as unanswered (judged_unsent)',
    );
  });

  it('with weights says so, and over how many conversations they weigh', () => {
    const weighted = RUN.map((r) => ({ ...r, costPer1000: r.totalCost * 100n }));
    const scenarios = [
      { id: 'a', title: null, source: 'a.yaml', turns: 3, weight: 2.5 },
      { id: 'b', title: null, source: 'b.yaml', turns: 3 },
    ];
    const text = verdict(weighted, { scenarios });
    expect(text).toContain('. On 10 conversations, weighted to 3.5, with simulated retention');
    expect(text).toContain('the Pareto frontier of cost and retention (both weighted) is');
  });

  it('with several models, leads with one pick per model, each against full on that model', () => {
    // gpt-4o-mini: facts saves 0.8% (5.95 / 6.00), under the threshold; claude-haiku-4-5: 25.6% (7.44 / 10.00).
    const haiku = { model: 'claude-haiku-4-5' };
    const two = [
      row('full', (600n * USD) / 10_000n, 10, { pareto: true }),
      row('facts', (595n * USD) / 10_000n, 10, { pareto: true }),
      row('window', (200n * USD) / 10_000n, 3, { pareto: true }),
      row('full', (1000n * USD) / 10_000n, 10, haiku),
      row('facts', (744n * USD) / 10_000n, 10, haiku),
      row('window', (300n * USD) / 10_000n, 3, haiku),
    ];
    const [first, second] = verdict(two, {}).split(/(?<=\.) (?=Use |On )/);
    expect(first).toBe(
      'Use full on gpt-4o-mini: no memory policy pays off at this length (10 turns a conversation on average): facts, the cheapest that keeps at least 95% of probed facts, saves only 0.8% against full ($5.95 against $6.00 per 1,000 conversations), under the 5% threshold.',
    );
    expect(second).toBe('Use facts on claude-haiku-4-5: it keeps 100% of probed facts for 26% less than full, $7.44 against $10.00 per 1,000 conversations.');
    expect(verdict(two, {})).toContain('the Pareto frontier of cost and retention is window on gpt-4o-mini ($2.00 per 1,000 conversations, 30%), facts on gpt-4o-mini ($5.95, 100%) and full on gpt-4o-mini ($6.00, 100%).');
  });

  it('without probes names the cheapest on each model, and says retention decides nothing', () => {
    const none = [row('full', 6n * USD, 0, { probes: 0 }), row('window', 2n * USD, 0, { probes: 0 })];
    expect(verdict(none, {})).toBe('Use window: it is the cheapest, $200.00 per 1,000 conversations, 67% less than full. On 10 conversations, no fact was probed, so retention decides nothing.');
  });
});

describe('the verdict without probes, on policies that went over the context window', () => {
  it('picks the cheapest that stayed within it, naming the cheaper ones that did not (their rejected calls cost nothing)', () => {
    const none = [row('full', 1n * USD, 0, { probes: 0, overflowTurns: 40 }), row('window', 2n * USD, 0, { probes: 0 }), row('summary', 3n * USD, 0, { probes: 0 })];
    expect(verdict(none, {})).toBe(
      'Use window: it is the cheapest within the context window, $200.00 per 1,000 conversations, 100% more than full. full (over it on 40 turns) costs less only by the calls over it, which would be rejected. ' +
        'On 10 conversations, no fact was probed, so retention decides nothing.',
    );
  });

  it('when every policy went over it, names the one that did least, and picks none', () => {
    const none = [row('full', 0n, 0, { probes: 0, overflowTurns: 100 }), row('window', 2n * USD, 0, { probes: 0, overflowTurns: 1 })];
    expect(verdict(none, {})).toBe(
      'No policy stays within the context window: each went over it on some turns, whose calls would be rejected and cost nothing, so its cost is short by them; window went over it least, on 1 turn ($200.00 per 1,000 conversations). ' +
        'On 10 conversations, no fact was probed, so retention decides nothing.',
    );
  });
});

describe('the run table', () => {
  const lines = (text: string) => text.trimEnd().split('\n');

  it('fits 100 columns, cheapest first, with cost per 1,000, its change against full, retention and pareto', () => {
    const text = policyTable({ policies: RUN }, INFO);
    const [caption, header, ...rows] = lines(text);
    expect(caption).toBe('gpt-4o-mini · prices of 2026-03-11 · tokenizer o200k_base · 10 conversations');
    expect(header!.split(/\s{2,}/).slice(0, 5)).toEqual(['policy', 'cost/1k conv USD', 'vs full', 'retention', 'pareto']);
    expect(rows.slice(0, 4).map((r) => r.split(/\s+/).slice(0, 5))).toEqual([
      ['window', '2.0000', '-66.7%', '30.0%', '(3/10)'],
      ['summary', '4.5000', '-25.0%', '90.0%', '(9/10)'],
      ['facts', '4.8000', '-20.0%', '100.0%', '(10/10)'],
      ['full', '6.0000', '0.0%', '100.0%', '(10/10)'],
    ]);
    for (const l of lines(text)) expect(l.length).toBeLessThanOrEqual(100);
  });

  it('leaves out what does not fit for long names, keeps what must be there, and --wide shows every column', () => {
    const long = RUN.map((r) => (r.policy === 'full' ? r : { ...r, policy: `${r.policy}:${'x'.repeat(50)}` }));
    const narrow = policyTable({ policies: long }, INFO);
    for (const l of lines(narrow)) expect(l.length).toBeLessThanOrEqual(100);
    expect(lines(narrow)[1]!.split(/\s{2,}/).slice(1)).toEqual(['cost/1k conv USD', 'retention', 'pareto']);
    const wide = lines(policyTable({ policies: long }, INFO, { wide: true }))[1]!.split(/\s{2,}/);
    expect(wide.slice(1)).toEqual(['cost/1k conv USD', 'vs full', 'retention', 'pareto', 'upkeep tokens', 'p95 s', 'cost/conv USD', 'input tokens', 'cached', 'output', 'overflow turns', 'overflow probes', 'scenarios']);
  });

  it('lines its columns up by what a terminal draws: a CJK character or an emoji takes two columns, an accent written apart none', () => {
    // 日本語 and 🙂 are drawn two columns wide each, the e with its combining accent one: the names below take 13, 12, 12 and 12 columns.
    const names = ['window-日本語', 'summary-🙂🙂', 'facts-cafe\u0301-x', 'full'];
    const text = policyTable({ policies: RUN.map((r, i) => ({ ...r, policy: names[i]!.padEnd(i === 3 ? 12 : 0, '-') })) }, INFO);
    const columns = (l: string) => [...l].reduce((n, c) => n + (/\p{M}/u.test(c) ? 0 : /[\u3000-\u9fff]|\p{Extended_Pictographic}/u.test(c) ? 2 : 1), 0);
    const [, header, ...rows] = lines(text);
    // Each row's cost ends where the header's `cost/1k conv USD` does.
    const end = columns(header!.slice(0, header!.indexOf('cost/1k conv USD') + 'cost/1k conv USD'.length));
    for (const r of rows.slice(0, 4)) expect(columns(r.slice(0, r.search(/\d\.\d{4}/) + 6)), r).toBe(end);
  });

  it('wraps the caption, the notes and the verdict by terminal columns, as the table is laid out: a CJK name or an emoji takes two a character', () => {
    // A CJK character is drawn two columns wide, a "-" or a Latin letter one.
    const names = ['窓口方針-日本語の長い名前です', '要約方針-記憶を要約して保存', '事実方針-事実を抜き出して保持', 'full'];
    // The measure below is the code's own: first checked against columns counted here, so a measure that took a CJK character as one column cannot pass the test.
    const drawn = (s: string) => [...s].reduce((n, c) => n + (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(c) ? 2 : 1), 0);
    for (const n of [...names, 'モデル-一二三四五六七八九十']) expect(terminalColumns(n), n).toBe(drawn(n));
    expect(drawn(names[0]!)).toBe(29);
    const cjk = RUN.map((r, i) => ({ ...r, policy: names[i]! }));
    const models = [{ ...MODELS[0]!, model: 'モデル-一二三四五六七八九十' }];
    for (const width of [80, 100]) {
      const text = runSummary({ policies: cjk }, { ...INFO, models }, { width });
      // No line runs past the width a terminal draws it at.
      expect(lines(text).filter((l) => terminalColumns(l) > width), `${width} columns`).toEqual([]);
      // And the verdict's lines are filled: its next word would not have fitted (the last line aside).
      const verdictLines = text.slice(text.indexOf('\n\nVerdict: ') + 2).trimEnd().split('\n');
      for (const [i, l] of verdictLines.slice(0, -1).entries()) expect(terminalColumns(`${l} ${verdictLines[i + 1]!.split(' ')[0]}`), l).toBeGreaterThan(width);
    }
  });

  it('shows overflows before other optional columns when there are some', () => {
    const over = RUN.map((r, i) => ({ ...r, policy: `${r.policy}-${'y'.repeat(20)}`, overflowTurns: i, overflowProbes: 0 }));
    const header = lines(policyTable({ policies: over }, INFO))[1]!;
    expect(header).toContain('overflow turns');
    expect(header).not.toContain('input tokens');
  });

  it('sorts by retention, name or the study order when told', () => {
    const order = (sort: 'cost' | 'retention' | 'name' | 'study') => lines(policyTable({ policies: RUN }, INFO, { sort })).slice(2, 6).map((l) => l.split(' ')[0]);
    expect(order('cost')).toEqual(['window', 'summary', 'facts', 'full']);
    // Equal retention: the cheaper first.
    expect(order('retention')).toEqual(['facts', 'full', 'summary', 'window']);
    expect(order('name')).toEqual(['facts', 'full', 'summary', 'window']);
    expect(order('study')).toEqual(['full', 'window', 'summary', 'facts']);
    // With answers measured, by the answers' retention, as the verdict reads: facts' replies held 8 of 10, summary's 9.
    const answered = RUN.map((r) => ({ ...r, answered: r.policy === 'facts' ? 8 : r.retained, answerRetention: (r.policy === 'facts' ? 8 : r.retained) / 10 }));
    expect(lines(policyTable({ policies: answered }, INFO, { sort: 'retention' })).slice(2, 6).map((l) => l.split(' ')[0])).toEqual(['full', 'summary', 'facts', 'window']);
  });

  it('says weighted in the headers and the caption, and what the weighted figures are', () => {
    const weighted = RUN.map((r) => ({ ...r, costPer1000: r.totalCost * 100n }));
    const scenarios = Array.from({ length: 10 }, (_, i) => ({ id: `s${i}`, title: null, source: `s${i}.yaml`, turns: 3, ...(i === 0 && { weight: 3 }) }));
    const text = runSummary({ policies: weighted }, { ...INFO, scenarios });
    expect(lines(text)[0]).toMatch(/ · 10 conversations, weighted to 12$/);
    expect(lines(text)[1]).toMatch(/cost\/1k conv USD \(weighted\) .* retention \(weighted\)/);
    // The note wrapped at 100 columns, its second line indented.
    expect(text).toContain("Weighted: cost per conversation, cost per 1,000 conversations and retention are means over the 10\n  conversations, weighted to 12 by their scenarios' weights; token and probe counts are not weighted\n");
    expect(text).toMatch(/\n\nVerdict: Use facts: it keeps 100% of probed facts for 20% less than full, \$4\.80 against \$6\.00 per\n1,000 conversations\. On 10 conversations, weighted to 12,/);
  });
});

describe('run and the reports, from the command line', () => {
  it('prints the verdict after the table; report.md opens with it, report.html too, with the chart, and the study last', async () => {
    const dir = tempDir();
    const io = capture();
    const code = await runMain(['run', '--scenario', 'scenarios/noah-amnesia.yaml', '--policy', 'full', '--policy', 'window-turns:turns=2', '--policy', 'summary', '--out', dir, '--quiet', '--min-retention', '50%'], io);
    expect(code).toBe(0);
    const [table, said] = io.stdout.split('\n\n');
    expect(table).toMatch(/^gpt-4o-mini · prices of \S+ · tokenizer o200k_base · 1 conversation\n/);
    // summary keeps the fact at full's cost, window-turns forgets it: full is the pick. The conversation is too short for summary to summarize, so nothing simulated was sent: plain retention.
    expect(said).toMatch(/^Verdict: Use full: no cheaper policy keeps at least 50% of probed facts\. On 1 conversation, with\nretention \(a fact counts/);
    const md = readFileSync(join(dir, 'report.md'), 'utf8');
    expect(md.startsWith('# ctxsim report\n\n## Verdict\n\nUse full: no cheaper policy keeps at least 50% of probed facts. On 1 conversation,')).toBe(true);
    expect(md).toContain(said!.replace(/\n/g, ' ').trim().replace(/\$/g, '\\$').replace(/^Verdict: /, ''));
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    const at = (s: string) => html.indexOf(s);
    expect(at('<section id="verdict">')).toBeGreaterThan(0);
    expect(at('<section id="verdict">')).toBeLessThan(at('id="chart-retention-vs-cost"'));
    expect(at('id="chart-retention-vs-cost"')).toBeLessThan(at('<section id="budget">'));
    expect(at('<section id="lost">')).toBeLessThan(at('<section id="study">'));
    expect(html).toContain('<p class="verdict">Use full: no cheaper policy keeps at least 50% of probed facts. On 1 conversation,');
  });

  it('a study’s minRetention and minSaving set the thresholds, the flags over them; bad --sort, --min-retention and --min-saving are exit 2 naming the flag', async () => {
    const dir = tempDir();
    const study = join(dir, 'study.yaml');
    // window-turns:turns=2 forgets the fact and saves 12.2% against full.
    writeFileSync(study, `scenarios: [${join(process.cwd(), 'scenarios/noah-amnesia.yaml')}]\npolicies: [full, 'window-turns:turns=2']\nminRetention: 0%\nminSaving: 15%\nout: out\n`);
    const io = capture();
    expect(await runMain(['run', study, '--quiet'], io)).toBe(0);
    const lead = 'Use full: no memory policy pays off at this length (5 turns a conversation on average): window-turns:turns=2, the cheapest that keeps at least 0% of probed facts, saves only 12% against full';
    expect(io.stdout.replace(/\n/g, ' ')).toContain(lead);
    expect(readFileSync(join(dir, 'out', 'report.md'), 'utf8')).toContain(lead);
    const flags = capture();
    expect(await runMain(['run', study, '--quiet', '--min-saving', '10%'], flags)).toBe(0);
    expect(flags.stdout.replace(/\n/g, ' ')).toContain('Verdict: Use window-turns:turns=2: it keeps 0% of probed facts for 12% less than full,');
    for (const [flag, value, said] of [
      ['--sort', 'price', 'ctxsim: --sort: expected one of cost|retention|name|study, got price'],
      ['--min-retention', '150%', 'ctxsim: --min-retention: a share of the probed facts is at most 100%, got 150%'],
      ['--min-retention', '-5%', 'ctxsim: --min-retention: a share of the probed facts is at least 0%, got -5%'],
      // A bare number is refused, as the gate's limits are: 0.95 could be 95% or 0.95%.
      ['--min-retention', '0.95', 'ctxsim: --min-retention: write 95% or 0.95% (a bare number could be a fraction or a percentage), got 0.95'],
      ['--min-saving', 'lots', 'ctxsim: --min-saving: expected a saving as a percentage such as 5%, got "lots"'],
      ['--min-saving', '101%', 'ctxsim: --min-saving: a saving is at most 100%, got 101%'],
    ] as const) {
      const bad = capture();
      expect(await runMain(['run', study, `${flag}=${value}`], bad)).toBe(2);
      expect(bad.stderr.trim()).toBe(said);
    }
  });
});
